package access

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// CertificateIdentity returns the identity a verified client certificate
// stands for: its subject, common name, organizations and subject
// alternative names.
func CertificateIdentity(cert *x509.Certificate) Identity {
	id := Identity{
		Transport:     Certificate,
		Subject:       cert.Subject.String(),
		CommonName:    cert.Subject.CommonName,
		Organizations: append([]string(nil), cert.Subject.Organization...),
	}
	id.SANs = append(id.SANs, cert.DNSNames...)
	for _, u := range cert.URIs {
		id.SANs = append(id.SANs, u.String())
	}
	id.SANs = append(id.SANs, cert.EmailAddresses...)
	for _, ip := range cert.IPAddresses {
		id.SANs = append(id.SANs, ip.String())
	}
	return id
}

// ConnectionIdentity returns the identity of the peer of a TLS connection
// whose handshake verified a client certificate, or an error when it
// verified none.
func ConnectionIdentity(cs tls.ConnectionState) (Identity, error) {
	if !cs.HandshakeComplete {
		return Identity{}, errors.New("access: the TLS handshake is not complete")
	}
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return Identity{}, errors.New("access: the TLS peer presented no verified client certificate")
	}
	return CertificateIdentity(cs.VerifiedChains[0][0]), nil
}

// CheckMutualTLS checks that a server's TLS configuration authenticates
// its clients: it requires and verifies their certificates against the
// configured client CAs. An error says what is missing.
func CheckMutualTLS(cfg *tls.Config) error {
	switch {
	case cfg == nil:
		return errors.New("access: mutual TLS: no TLS configuration")
	case len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil:
		return errors.New("access: mutual TLS: the configuration has no server certificate")
	case cfg.ClientAuth != tls.RequireAndVerifyClientCert:
		return fmt.Errorf("access: mutual TLS: ClientAuth is %v, want tls.RequireAndVerifyClientCert: a client without a certificate signed by the client CAs must be refused", cfg.ClientAuth)
	case cfg.ClientCAs == nil:
		return errors.New("access: mutual TLS: no ClientCAs: client certificates would be verified against the system's roots")
	}
	return nil
}
