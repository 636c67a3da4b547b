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

// startAPI loads the access rules, opens the audit log, listens on the
// API's doors and serves them in g until ctx is done. The returned
// function closes the audit log: call it after g is done.
func (d *daemon) startAPI(ctx context.Context, g *errgroup.Group) (func() error, error) {
	audit, closeAudit, err := openAudit(d.cfg.API.AuditLog)
	if err != nil {
		return nil, err
	}
	policy, err := d.apiPolicy(audit)
	if err == nil {
		err = d.listenDoors(ctx, g, policy)
	}
	if err != nil {
		return nil, errors.Join(err, closeAudit())
	}
	return closeAudit, nil
}

// listenDoors listens on the unix socket (peer credentials) and the TCP
// address (mutual TLS) the config names, and serves each in g.
func (d *daemon) listenDoors(ctx context.Context, g *errgroup.Group, policy *access.Policy) error {
	var mtls access.Authenticator
	if d.cfg.API.Addr != "" {
		cfg, err := serverTLS(d.cfg.API)
		if err != nil {
			return err
		}
		if mtls, err = access.MutualTLS(cfg); err != nil {
			return err
		}
	}
	if d.cfg.APISocket != "" {
		lis, err := listenAPI(d.cfg.APISocket)
		if err != nil {
			return err
		}
		d.apiAddrs = append(d.apiAddrs, lis.Addr())
		d.logger.Info("API listening on " + d.cfg.APISocket + " (resgraphctl talks to it), access by " + d.rulesName())
		g.Go(func() error { return d.serveAPI(ctx, lis, access.PeerCredentials(), policy) })
	}
	if mtls != nil {
		lis, err := net.Listen("tcp", d.cfg.API.Addr)
		if err != nil {
			return err
		}
		d.apiAddrs = append(d.apiAddrs, lis.Addr())
		d.logger.Info("API listening on " + lis.Addr().String() + " with mutual TLS, access by " + d.rulesName())
		g.Go(func() error { return d.serveAPI(ctx, lis, mtls, policy) })
	}
	return nil
}

func (d *daemon) rulesName() string {
	if d.cfg.API.Rules == "" {
		return "the built-in rules (this uid only)"
	}
	return d.cfg.API.Rules
}

// apiPolicy returns the API's access policy: the rule file's, or the
// built-in rules. Its warnings are logged.
func (d *daemon) apiPolicy(audit *zap.Logger) (*access.Policy, error) {
	opts := []access.PolicyOption{access.WithAudit(audit), access.WithLogger(d.logger.Named("access"))}
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

// serverTLS returns the TLS configuration of the TCP door: the agent's
// certificate, client certificates required and verified against the
// client CAs.
func serverTLS(c apiConfig) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(c.Cert, c.Key)
	if err != nil {
		return nil, fmt.Errorf("--api-cert %s, --api-key %s: %w", c.Cert, c.Key, err)
	}
	pem, err := os.ReadFile(c.ClientCA)
	if err != nil {
		return nil, fmt.Errorf("--api-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--api-client-ca %s: no PEM certificate in it", c.ClientCA)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS13}, nil
}
