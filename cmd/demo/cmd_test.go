package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/intent"
)

func TestC1_RunTellsTheStoryAndStopsByItself(t *testing.T) {
	var out syncBuffer
	opts := cli.RunOptions{
		Duration: 3 * time.Second, DeleteAfter: time.Second, Seed: 1, ApplyFailures: 1,
		// Flapping on, to run the kernel's goroutine; nothing below depends
		// on which carrier flaps when.
		FlapMin: 200 * time.Millisecond, FlapMax: 400 * time.Millisecond,
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	require.NoError(t, run(ctx, opts, &out), "run returns nil when --duration elapses")
	require.NoError(t, ctx.Err(), "run stopped by itself")

	log := out.String()
	for _, want := range []string{
		"resgraph demo: 8 controllers, 3 links from built-in sample",
		"eth1 is deleted after 1s, stopping after 3s",
		"state created    LinkSpec(config/eth0) v1",
		"user deleting link eth1",
		"user link eth1 deleted",
		"state destroyed  LinkSpec(config/eth1)",
		"final state:",
		"LinkSpec(config/wlan0)",
	} {
		assert.Contains(t, log, want)
	}
	final := log[strings.Index(log, "final state:"):]
	assert.NotContains(t, final, "eth1", "the deleted link left nothing behind")
}

func TestC2_InvalidIntentFailsBeforeAnythingRuns(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, doc string
		want      string
	}{
		{"syntax.json", "{\n  \"links\": [\n    {\"name\": \"eth0\",}\n  ]\n}\n", "syntax.json:3:21: invalid JSON"},
		{"unknown.json", "{\"links\": [\n  {\"name\": \"eth0\", \"mut\": 1500}\n]}\n", `unknown.json:2:20: links[0].mut: unknown field`},
		{"gateway.json", "{\"links\": [{\"name\": \"eth0\", \"addresses\": [\"10.0.0.2/24\"],\n \"gateway\": \"10.9.9.9\"}]}", "gateway.json:2:13: links[0].gateway: gateway 10.9.9.9 is not on-link"},
		{"second-link.json", "{\"links\": [{\"name\": \"eth0\"}, {\"name\": \"eth0\"}]}", `second-link.json:1:39: links[1].name: duplicate link name "eth0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			require.NoError(t, os.WriteFile(path, []byte(tt.doc), 0o600))

			var out syncBuffer
			err := run(t.Context(), cli.RunOptions{ApplyFile: path, Duration: time.Hour}, &out)
			require.Error(t, err)
			assert.True(t, state.IsInvalidError(err))
			var ie *intent.Error
			require.ErrorAs(t, err, &ie)
			assert.Contains(t, err.Error(), filepath.Join(dir, tt.want))
			assert.Empty(t, out.String(), "nothing ran, nothing was written")

			var stdout, stderr bytes.Buffer
			assert.Equal(t, 1, mainWithExit([]string{"apply", path}, &stdout, &stderr))
			assert.Contains(t, stderr.String(), filepath.Join(dir, tt.want))
			assert.Empty(t, stdout.String())
		})
	}
}

func TestC3_ApplyPrintsADryRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, mainWithExit([]string{"apply", filepath.Join("testdata", "intent.json")}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "valid, 3 link(s)")
	assert.Contains(t, stdout.String(), "RouteSpec(network/eth1/10.200.0.0-16)")
	assert.Contains(t, stdout.String(), "dry run: nothing was written")

	assert.Equal(t, 1, mainWithExit([]string{"apply", filepath.Join(t.TempDir(), "missing.json")}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "missing.json")
}

func TestC4_NonLoopbackDebugAddressIsRefused(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, mainWithExit([]string{"run", "--debug-addr", "0.0.0.0:0", "--duration", "1h"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "--debug-allow-remote")
	assert.Empty(t, stdout.String(), "nothing started")
}

func TestC5_GraphCommandPrintsEveryFormat(t *testing.T) {
	outputs := map[string]string{}
	for _, f := range []string{"dot", "mermaid", "json"} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, mainWithExit([]string{"graph", "--format", f}, &stdout, &stderr), stderr.String())
		outputs[f] = stdout.String()
		for _, name := range controllers.Names() {
			assert.Contains(t, stdout.String(), name, f)
		}
	}
	assert.True(t, strings.HasPrefix(outputs["dot"], "digraph"))
	checkDOT(t, outputs["dot"])
	assert.True(t, strings.HasPrefix(outputs["mermaid"], "flowchart"))
	assert.True(t, json.Valid([]byte(outputs["json"])))
	checkGraphJSON(t, outputs["json"])

	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, mainWithExit([]string{"graph", "--format", "svg"}, &stdout, &stderr))
}

func TestC6_DeleteLinkMustNameALinkOfTheIntent(t *testing.T) {
	in, err := loadIntent("")
	require.NoError(t, err)
	cfg, err := configFor(cli.RunOptions{}, in)
	require.NoError(t, err)
	assert.Equal(t, "eth1", cfg.DeleteLink, "default: the intent's last link")
	cfg, err = configFor(cli.RunOptions{DeleteLink: cli.NoDelete}, in)
	require.NoError(t, err)
	assert.Empty(t, cfg.DeleteLink)
	_, err = configFor(cli.RunOptions{DeleteLink: "eth9"}, in)
	assert.ErrorContains(t, err, "--delete-link eth9")
}

func TestC7_HelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 0, mainWithExit(args, &stdout, &stderr), args)
		assert.Contains(t, stdout.String(), "Usage:", args)
		assert.Contains(t, stdout.String(), "demo graph", args)
	}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, mainWithExit([]string{"help", "run"}, &stdout, &stderr))
	assert.Contains(t, stdout.String(), "-debug-addr")
	assert.Equal(t, 2, mainWithExit([]string{"help", "bogus"}, &stdout, &stderr))
}
