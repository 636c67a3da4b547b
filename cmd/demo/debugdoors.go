package main

import (
	"context"
	"net"

	"golang.org/x/sync/errgroup"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/observe"
)

// The agent's debug pages (package debughttp, with the flight recorder's
// /debug/recording/) have the API's doors and its rules (--rules): on a
// unix socket (--debug-socket) the identity is the peer's uid and gids,
// on TCP with mutual TLS (--debug-addr with --debug-cert, --debug-key
// and --debug-client-ca) the client certificate's, and each page is
// decided by the policy's pages (access.PagePprof, PageExplain,
// PageGraph, PageHealth, PageRecording): a denial is a 403 naming the
// identity and the page, audited in audit.log. A --debug-addr without TLS
// serves every page to whoever connects, and only with the explicit
// consent of --debug-insecure (loopback) or --debug-allow-remote (any
// address), logged as a warning.

// startDebug listens on the debug endpoint's doors the config names and
// serves each in g until ctx is done.
func (d *daemon) startDebug(ctx context.Context, g *errgroup.Group, dr *doors) error {
	o := d.cfg.Debug
	if o.Socket == "" && o.Addr == "" {
		return nil
	}
	if d.cfg.ExpvarName != "" {
		if err := observe.PublishExpvar(d.cfg.ExpvarName, d.engine.Observe()); err != nil {
			return err
		}
	}
	if o.Socket != "" {
		ln, err := listenSocket(o.Socket, "its debug pages", "--debug-socket")
		if err != nil {
			return err
		}
		d.logger.Info("debug endpoint listening on unix socket " + o.Socket + " (curl --unix-socket " + o.Socket + " http://agent/debug/), access by " + d.rulesName())
		d.serveDebug(ctx, g, ln, access.PeerCredentials(), dr.policy)
	}
	if o.Addr == "" {
		return nil
	}
	ln, err := debughttp.Listen(o.Addr, debughttp.AllowRemote()) // the flags were checked (cli.DebugOptions)
	if err != nil {
		return err
	}
	d.debugAddr = ln.Addr()
	switch {
	case dr.debugTLS != nil:
		d.logger.Info("debug endpoint listening on https://" + ln.Addr().String() + "/debug/ with mutual TLS, access by " + d.rulesName())
	case o.AllowRemote:
		d.logger.Info("debug endpoint listening on http://" + ln.Addr().String() + "/debug/") // debughttp.Serve warns
	default:
		d.logger.Warn("debug endpoint listening on http://" + ln.Addr().String() + "/debug/ WITHOUT authentication (--debug-insecure): every local user may read its profiles, explanations and recordings")
	}
	d.serveDebug(ctx, g, ln, dr.debugTLS, dr.policy)
	return nil
}

// serveDebug serves the debug pages on ln in g until ctx is done: with
// auth, each connection authenticated and each page decided by policy;
// without, to whoever connects.
func (d *daemon) serveDebug(ctx context.Context, g *errgroup.Group, ln net.Listener, auth access.Authenticator, policy *access.Policy) {
	opts := []debughttp.Option{debughttp.WithPage(debughttp.Page{Path: "/debug/recording/", Title: "flight recorder", Handler: d.recorder.Handler(), Access: access.PageRecording})}
	var serveOpts []debughttp.ServeOption
	if auth != nil {
		opts = append(opts, debughttp.WithAccess(policy))
		serveOpts = append(serveOpts, debughttp.WithAuthenticator(auth, policy))
	} else {
		serveOpts = append(serveOpts, debughttp.Insecure(), debughttp.WithServeLogger(d.logger.Named("debug")))
	}
	h := debughttp.New(d.engine.Observe(), opts...)
	g.Go(func() error { return debughttp.Serve(ctx, ln, h, serveOpts...) })
}
