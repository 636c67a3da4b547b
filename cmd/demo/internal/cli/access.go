package cli

import (
	"errors"
	"flag"
)

// accessFlags adds the flags of the API's access control to fs.
func (o *RunOptions) accessFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Rules, "rules", "", "the access rules of the API and of the debug pages, a YAML `FILE` (see package access; the debug pages are the pages pprof, explain, graph, health and recording); default: the agent's own uid may do everything, nobody else anything. Every write and denial goes to audit.log in --data-dir")
	fs.StringVar(&o.APIAddr, "api-addr", "", "also serve the API on `HOST:PORT`, with mutual TLS (--api-cert, --api-key, --api-client-ca): the identity is the client certificate's")
	fs.StringVar(&o.APICert, "api-cert", "", "the agent's TLS certificate `FILE` (PEM) for --api-addr")
	fs.StringVar(&o.APIKey, "api-key", "", "the agent's TLS key `FILE` (PEM) for --api-addr")
	fs.StringVar(&o.APIClientCA, "api-client-ca", "", "the CA certificates `FILE` (PEM) --api-addr verifies client certificates against")
}

// checkAccess refuses access flags that do not go together.
func (o *RunOptions) checkAccess() []error {
	var errs []error
	tls := o.APICert != "" || o.APIKey != "" || o.APIClientCA != ""
	switch {
	case o.APIAddr != "" && (o.APICert == "" || o.APIKey == "" || o.APIClientCA == ""):
		errs = append(errs, errors.New("--api-addr serves with mutual TLS: give --api-cert, --api-key and --api-client-ca"))
	case o.APIAddr == "" && tls:
		errs = append(errs, errors.New("--api-cert, --api-key and --api-client-ca are for --api-addr, which is not given"))
	}
	if (o.APIAddr != "" || o.Debug.TLS()) && o.DataDir == "" {
		errs = append(errs, errors.New("--data-dir is empty: the audit log of the API and of the debug pages is written there"))
	}
	return errs
}
