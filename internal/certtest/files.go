package certtest

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
)

// WriteCA writes the CA's certificate to dir/name as PEM and returns its
// path.
func (ca *CA) WriteCA(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}), 0o600)
}

// WriteLeaf issues a certificate for leaf and writes it and its key to
// dir/name.pem and dir/name-key.pem (PEM); it returns their paths.
func (ca *CA) WriteLeaf(dir, name string, leaf Leaf) (cert, key string, err error) {
	c, err := ca.Issue(leaf)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return "", "", err
	}
	cert, key = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600); err != nil {
		return "", "", err
	}
	return cert, key, os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

// LoopbackServer is the leaf of a server on loopback: 127.0.0.1, ::1 and
// localhost.
var LoopbackServer = Leaf{CommonName: "server", DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
