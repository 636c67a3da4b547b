package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
)

// TestExplainCommandAsksARunningDemo: `demo explain --addr A controller
// NAME | resource NS/TYPE/ID` asks a running demo's /debug/explain and
// prints the answer as text (or JSON with --json); an unknown controller is
// an error that says so.
func TestExplainCommandAsksARunningDemo(t *testing.T) {
	cfg := sampleConfig(t)
	cfg.Debug = cli.DebugOptions{Addr: "127.0.0.1:0", Insecure: true}
	d, _ := startDaemon(t, cfg)
	waitConverged(t, d)
	addr := d.DebugAddr().String()
	ctx := t.Context()

	var out bytes.Buffer
	name := controllers.LinkApplyControllerName
	require.NoError(t, explainCmd(ctx, &out, cli.ExplainOptions{Addr: addr, Controller: name, Timeout: 30 * time.Second}))
	assert.Contains(t, out.String(), "qcontroller "+name+": ")
	assert.Contains(t, out.String(), "reconciles ")

	// A resource a controller wrote, found in the trace.
	_, body := get(t, "http://"+addr+"/debug/trace?event=commit")
	evs, err := trace.ReadJSONLines(strings.NewReader(body))
	require.NoError(t, err)
	var written trace.Ref
	for _, ev := range evs {
		if ev.Type == trace.Commit && ev.Op == "create" {
			written = ev.Resource
		}
	}
	require.NotEmpty(t, written.ID, "the demo's controllers created resources")
	out.Reset()
	require.NoError(t, explainCmd(ctx, &out, cli.ExplainOptions{Addr: addr, Resource: explain.ResourceParam(written), Timeout: 30 * time.Second}))
	assert.Contains(t, out.String(), "resource "+written.Type+"("+written.Namespace+"/"+written.ID+")")
	assert.Contains(t, out.String(), written.Writer, "its writer is named")

	out.Reset()
	require.NoError(t, explainCmd(ctx, &out, cli.ExplainOptions{Addr: addr, Controller: name, JSON: true, Timeout: 30 * time.Second}))
	var x explain.Controller
	require.NoError(t, json.Unmarshal(out.Bytes(), &x))
	assert.Equal(t, name, x.Name)
	assert.NotEmpty(t, x.Recent, "its last reconciles, from the trace")

	err = explainCmd(ctx, &out, cli.ExplainOptions{Addr: addr, Controller: "Nobody", Timeout: 30 * time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404")
}

// TestNoHotLoopOnTheDemo: the demo with its carriers flapping fast
// (every controller reconciling again and again) is never flagged as a hot
// loop: each change comes from the kernel, not from a cycle of writes.
func TestNoHotLoopOnTheDemo(t *testing.T) {
	cfg := sampleConfig(t)
	cfg.Debug = cli.DebugOptions{Addr: "127.0.0.1:0", Insecure: true}
	cfg.Kernel = kernel.Config{FailFirst: 2, Seed: 1, FlapMin: 20 * time.Millisecond, FlapMax: 60 * time.Millisecond}
	d, _ := startDaemon(t, cfg)
	base := "http://" + d.DebugAddr().String()
	statuses := func() debughttp.StatusDocument {
		_, body := get(t, base+"/debug/controllers", "Accept", "application/json")
		var doc debughttp.StatusDocument
		require.NoError(t, json.Unmarshal([]byte(body), &doc))
		return doc
	}
	total := func(doc debughttp.StatusDocument) (n uint64) {
		for _, c := range doc.Controllers {
			n += c.Metrics.Reconciles
		}
		return n
	}
	// Observe for as long as it takes the controllers to run 1,000 more
	// reconciles (several seconds of flapping: detector windows are 0.5 s).
	start := total(statuses())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	began := time.Now()
	for total(statuses()) < start+1000 || time.Since(began) < 3*time.Second {
		select {
		case <-ctx.Done():
			require.FailNow(t, "the demo did not reconcile 1,000 times in a minute")
		case <-tick.C:
		}
	}
	for _, c := range statuses().Controllers {
		assert.Zero(t, c.Metrics.HotLoops, "%s flagged: %s", c.Name, c.HotLoop)
	}
}
