package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/resgraph/resgraph/pkg/observe/explain"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
)

// explainCmd is the explain command: it asks a running agent's debug
// endpoint (/debug/explain, JSON) to explain a resource or a controller,
// and prints the answer as text (or the JSON with --json).
func explainCmd(ctx context.Context, w io.Writer, o cli.ExplainOptions) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	q := url.Values{"format": {"json"}}
	var x any = &explain.Controller{}
	if o.Resource != "" {
		q.Set("resource", o.Resource)
		x = &explain.Resource{}
	} else {
		q.Set("controller", o.Controller)
	}
	client, base, err := debugClient(o)
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	defer client.CloseIdleConnections()
	u := base + "/debug/explain?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("explain: %w (is the agent serving its debug pages on %s?)", err, o.Addr)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("explain: read the answer of %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("explain: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	if o.JSON {
		_, err = w.Write(body)
		return err
	}
	if err := json.Unmarshal(body, x); err != nil {
		return fmt.Errorf("explain: the answer of %s is not an explanation: %w", u, err)
	}
	return explain.WriteText(w, x)
}

// debugClient returns an HTTP client of the agent's debug endpoint o.Addr
// and the URL of its root: over the unix socket, over mutual TLS with
// o's files, or plain HTTP.
func debugClient(o cli.ExplainOptions) (*http.Client, string, error) {
	tr := &http.Transport{}
	switch {
	case o.Socket():
		var d net.Dialer
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", o.Addr) }
		return &http.Client{Transport: tr}, "http://agent", nil
	case o.TLS():
		cert, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			return nil, "", fmt.Errorf("--client-certificate %s, --client-key %s: %w", o.Cert, o.Key, err)
		}
		pem, err := os.ReadFile(o.CA)
		if err != nil {
			return nil, "", fmt.Errorf("--certificate-authority: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, "", fmt.Errorf("--certificate-authority %s: no PEM certificate in it", o.CA)
		}
		tr.TLSClientConfig = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS13}
		return &http.Client{Transport: tr}, "https://" + o.Addr, nil
	}
	return &http.Client{Transport: tr}, "http://" + o.Addr, nil
}
