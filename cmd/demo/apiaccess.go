package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sync/errgroup"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
	"github.com/resgraph/resgraph/pkg/access"
)

// apiConfig is the API's access control: the rule file (empty: the
// built-in rules), the audit log, and the TCP door with mutual TLS.
type apiConfig struct {
	Rules    string
	AuditLog string
	Addr     string
	// Cert, Key and ClientCA are PEM files: the agent's certificate and
	// key, and the CAs of its clients' certificates.
	Cert, Key, ClientCA string
}

// apiConfigFor resolves the run options' access flags: the audit log is
// audit.log in the data directory (beside the socket without one).
func apiConfigFor(o cli.RunOptions) apiConfig {
	dir := o.DataDir
	if dir == "" && o.APISocket != "" {
		dir = filepath.Dir(o.APISocket)
	}
	c := apiConfig{Rules: o.Rules, Addr: o.APIAddr, Cert: o.APICert, Key: o.APIKey, ClientCA: o.APIClientCA}
	if dir != "" {
		c.AuditLog = filepath.Join(dir, "audit.log")
	}
	return c
}

// doors is what every door of the agent shares: the access policy (nil
// when no door is authenticated) with its audit log, and the mutual TLS
// of each TCP door that has it.
type doors struct {
	policy           *access.Policy
	apiTLS, debugTLS access.Authenticator
	// closeAudit closes the audit log: call it once every door is done.
	closeAudit func() error
}

// openDoors loads the certificates of the TCP doors and the access rules,
// then opens the audit log: a file missing or wrong fails before anything
// is opened or written.
func (d *daemon) openDoors() (*doors, error) {
	dr := &doors{closeAudit: func() error { return nil }}
	var err error
	if d.cfg.API.Addr != "" {
		if dr.apiTLS, err = mutualTLS("--api", d.cfg.API.Cert, d.cfg.API.Key, d.cfg.API.ClientCA); err != nil {
			return nil, err
		}
	}
	if d.cfg.Debug.TLS() {
		if dr.debugTLS, err = mutualTLS("--debug", d.cfg.Debug.Cert, d.cfg.Debug.Key, d.cfg.Debug.ClientCA); err != nil {
			return nil, err
		}
	}
	if d.cfg.APISocket == "" && d.cfg.API.Addr == "" && !d.cfg.Debug.Authenticated() {
		return dr, nil
	}
	if _, err := d.policy(zap.NewNop(), zap.NewNop()); err != nil {
		return nil, fmt.Errorf("--rules: %w", err) // checked before the audit log is created
	}
	audit, closeAudit, err := openAudit(d.cfg.API.AuditLog)
	if err != nil {
		return nil, err
	}
	if dr.policy, err = d.policy(audit, d.logger.Named("access")); err != nil {
		return nil, errors.Join(err, closeAudit())
	}
	dr.closeAudit = closeAudit
	return dr, nil
}

// startAPI listens on the API's doors the config names, the unix socket
// (peer credentials) and the TCP address (mutual TLS), and serves each in
// g until ctx is done.
func (d *daemon) startAPI(ctx context.Context, g *errgroup.Group, dr *doors) error {
	if d.cfg.APISocket != "" {
		lis, err := listenSocket(d.cfg.APISocket, "its API", "--data-dir or --api-socket")
		if err != nil {
			return err
		}
		d.apiAddrs = append(d.apiAddrs, lis.Addr())
		d.logger.Info("API listening on " + d.cfg.APISocket + " (resgraphctl talks to it), access by " + d.rulesName())
		g.Go(func() error { return d.serveAPI(ctx, lis, access.PeerCredentials(), dr.policy) })
	}
	if dr.apiTLS != nil {
		lis, err := net.Listen("tcp", d.cfg.API.Addr)
		if err != nil {
			return err
		}
		d.apiAddrs = append(d.apiAddrs, lis.Addr())
		d.logger.Info("API listening on " + lis.Addr().String() + " with mutual TLS, access by " + d.rulesName())
		g.Go(func() error { return d.serveAPI(ctx, lis, dr.apiTLS, dr.policy) })
	}
	return nil
}

func (d *daemon) rulesName() string {
	if d.cfg.API.Rules == "" {
		return "the built-in rules (this uid only)"
	}
	return d.cfg.API.Rules
}

// policy returns the access policy of the API and the debug pages: the
// rule file's, or the built-in rules; its audit records go to audit and
// its warnings to logger.
func (d *daemon) policy(audit, logger *zap.Logger) (*access.Policy, error) {
	opts := []access.PolicyOption{access.WithAudit(audit), access.WithLogger(logger)}
	if d.cfg.API.Rules != "" {
		return access.LoadFile(d.cfg.API.Rules, d.codec.Definitions(), opts...)
	}
	return access.NewPolicy(d.codec.Definitions(), builtinRules(uint32(os.Getuid())), opts...)
}

// builtinRules give the agent's own uid every access, and nobody else
// any: the rules of an agent run without --rules.
func builtinRules(uid uint32) access.Rules {
	return access.Rules{
		Roles: []access.Role{{
			Name:   "owner",
			Grants: []access.Grant{{Verbs: access.AllVerbs, Namespaces: []string{"*"}, Types: []string{"*"}}},
			Pages:  []access.Page{"*"},
		}},
		Bindings: []access.Binding{{Role: "owner", To: []access.Match{access.UID(uid)}}},
	}
}

// openAudit opens the audit log (appending, 0600) as a logger of JSON
// lines; path "" audits nothing.
func openAudit(path string) (*zap.Logger, func() error, error) {
	if path == "" {
		return zap.NewNop(), func() error { return nil }, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	l := zap.New(zapcore.NewCore(enc, zapcore.Lock(f), zapcore.InfoLevel))
	return l, func() error { return errors.Join(l.Sync(), f.Close()) }, nil
}

// mutualTLS returns the authenticator of a TCP door (flags prefix, e.g.
// "--api"): the agent's certificate, client certificates required and
// verified against the client CAs.
func mutualTLS(prefix, certFile, keyFile, clientCA string) (access.Authenticator, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("%s-cert %s, %s-key %s: %w", prefix, certFile, prefix, keyFile, err)
	}
	pem, err := os.ReadFile(clientCA)
	if err != nil {
		return nil, fmt.Errorf("%s-client-ca: %w", prefix, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s-client-ca %s: no PEM certificate in it", prefix, clientCA)
	}
	return access.MutualTLS(&tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS13})
}
