package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/state"
)

// DebugOptions are the debug endpoint's doors. Each authenticated door
// decides every page by the API's access rules (--rules): a unix socket
// with the peer's credentials, a TCP address with mutual TLS. A TCP
// address without TLS is served to whoever connects, and only with
// Insecure (loopback) or AllowRemote (any address).
type DebugOptions struct {
	// Socket is the unix socket the debug pages are served on; "" none.
	Socket string
	// Addr is the TCP address they are served on; "" none.
	Addr string
	// Cert and Key are the agent's certificate and key for Addr, ClientCA
	// the CAs its clients' certificates are verified against (PEM files):
	// mutual TLS.
	Cert, Key, ClientCA string
	// Insecure serves a loopback Addr without authentication; AllowRemote
	// serves any Addr without authentication.
	Insecure, AllowRemote bool
}

// TLS reports whether any TLS file is given.
func (o DebugOptions) TLS() bool { return o.Cert != "" || o.Key != "" || o.ClientCA != "" }

// Authenticated reports whether a door decides its pages by the rules.
func (o DebugOptions) Authenticated() bool { return o.Socket != "" || o.TLS() }

// debugFlags adds the debug endpoint's flags to fs.
func (o *DebugOptions) debugFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Socket, "debug-socket", "", "serve the debug pages (package debughttp) on the unix socket `PATH`: the identity is the connecting process's uid, each page decided by --rules")
	fs.StringVar(&o.Addr, "debug-addr", "", "serve the debug pages on `HOST:PORT` (port 0 picks one), with mutual TLS (--debug-cert, --debug-key, --debug-client-ca): the identity is the client certificate's, each page decided by --rules")
	fs.StringVar(&o.Cert, "debug-cert", "", "the agent's TLS certificate `FILE` (PEM) for --debug-addr")
	fs.StringVar(&o.Key, "debug-key", "", "the agent's TLS key `FILE` (PEM) for --debug-addr")
	fs.StringVar(&o.ClientCA, "debug-client-ca", "", "the CA certificates `FILE` (PEM) --debug-addr verifies client certificates against")
	fs.BoolVar(&o.Insecure, "debug-insecure", false, "serve a loopback --debug-addr without TLS nor access rules: every local user may read every page (profiles, explanations, recordings)")
	fs.BoolVar(&o.AllowRemote, "debug-allow-remote", false, "serve any --debug-addr, non-loopback included, without TLS nor access rules: whoever reaches the port may read every page")
}

// check refuses debug flags that do not go together.
func (o DebugOptions) check() []error {
	var errs []error
	tls := o.TLS()
	switch {
	case o.Addr == "" && (tls || o.Insecure || o.AllowRemote):
		errs = append(errs, errors.New("--debug-cert, --debug-key, --debug-client-ca, --debug-insecure and --debug-allow-remote are for --debug-addr, which is not given (--debug-socket authenticates by peer credentials, without TLS)"))
	case o.Addr == "":
	case tls && (o.Insecure || o.AllowRemote):
		errs = append(errs, errors.New("--debug-addr: mutual TLS (--debug-cert, ...) and --debug-insecure or --debug-allow-remote (no authentication): choose one"))
	case tls && (o.Cert == "" || o.Key == "" || o.ClientCA == ""):
		errs = append(errs, errors.New("--debug-addr serves with mutual TLS: give --debug-cert, --debug-key and --debug-client-ca"))
	case tls:
		if err := debughttp.CheckAddr(o.Addr, debughttp.AllowRemote()); err != nil {
			errs = append(errs, fmt.Errorf("--debug-addr: %w", err))
		}
	default:
		errs = append(errs, o.checkInsecure())
	}
	if strings.Contains(o.Addr, "/") {
		errs = append(errs, fmt.Errorf("--debug-addr %s: a unix socket is --debug-socket", o.Addr))
	}
	return errs
}

// checkInsecure checks a --debug-addr without TLS: served without
// authentication, it needs the explicit consent of --debug-insecure
// (loopback) or --debug-allow-remote (any address).
func (o DebugOptions) checkInsecure() error {
	if o.AllowRemote {
		if err := debughttp.CheckAddr(o.Addr, debughttp.AllowRemote()); err != nil {
			return fmt.Errorf("--debug-addr: %w", err)
		}
		return nil
	}
	if err := debughttp.CheckAddr(o.Addr); err != nil {
		return fmt.Errorf("--debug-addr: %w (serve it with mutual TLS: --debug-cert, --debug-key, --debug-client-ca; or without authentication: --debug-allow-remote)", err)
	}
	if !o.Insecure {
		return state.NewInvalidError(nil, "--debug-addr %s without TLS would serve the debug pages (profiles, explanations, recordings) to every local user: "+
			"give --debug-cert, --debug-key and --debug-client-ca (mutual TLS, pages decided by --rules), or serve them on --debug-socket PATH (peer credentials), "+
			"or --debug-insecure to serve them without authentication", o.Addr)
	}
	return nil
}

// Socket reports whether Addr is a unix socket path.
func (o ExplainOptions) Socket() bool { return strings.Contains(o.Addr, "/") }

// TLS reports whether any TLS file is given.
func (o ExplainOptions) TLS() bool { return o.Cert != "" || o.Key != "" || o.CA != "" }

// checkAddr refuses an explain address and TLS files that do not go
// together.
func (o ExplainOptions) checkAddr() []error {
	switch {
	case o.Addr == "":
		return []error{errors.New("explain: --addr is required (the agent's --debug-socket or --debug-addr)")}
	case o.Socket() && o.TLS():
		return []error{fmt.Errorf("explain: --addr %s is a unix socket, authenticated by your uid: --client-certificate, --client-key and --certificate-authority are for a HOST:PORT --addr", o.Addr)}
	case o.TLS() && (o.Cert == "" || o.Key == "" || o.CA == ""):
		return []error{errors.New("explain: mutual TLS needs --client-certificate, --client-key and --certificate-authority")}
	}
	return nil
}
