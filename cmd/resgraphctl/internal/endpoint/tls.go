package endpoint

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLS is resgraphctl's side of mutual TLS: its certificate and key, and
// the CA the daemon's certificate is verified against (PEM files).
type TLS struct {
	Cert, Key, CA string
}

// Enabled reports whether any of the files is given.
func (t TLS) Enabled() bool { return t.Cert != "" || t.Key != "" || t.CA != "" }

// config loads the files: all three are needed.
func (t TLS) config() (*tls.Config, error) {
	if t.Cert == "" || t.Key == "" || t.CA == "" {
		return nil, errors.New("mutual TLS needs --client-certificate, --client-key and --certificate-authority")
	}
	cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
	if err != nil {
		return nil, fmt.Errorf("--client-certificate %s, --client-key %s: %w", t.Cert, t.Key, err)
	}
	pem, err := os.ReadFile(t.CA)
	if err != nil {
		return nil, fmt.Errorf("--certificate-authority: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--certificate-authority %s: no PEM certificate in it", t.CA)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS13}, nil
}
