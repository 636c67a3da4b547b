package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
	u := "http://" + o.Addr + "/debug/explain?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("explain: %w (is the agent running with --debug-addr %s?)", err, o.Addr)
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
