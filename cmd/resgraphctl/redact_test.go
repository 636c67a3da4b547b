package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	obsremote "github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// The keys of the secrets of the flight daemon: no output of resgraphctl
// may hold them.
const (
	liveKey     = "hunter2-live-key"
	proposedKey = "swordfish-proposed-key"
)

// escrow is the flight daemon's controller: it keeps an item per secret
// whose size is the length of the secret's key (what a plan shows of a
// secret without showing it).
func escrow() controller.Controller {
	return transform.NewController(transform.Settings[*typed.Resource[secretSpec, secretDef], *item]{
		Name: "escrow",
		MapMetadataFunc: func(s *typed.Resource[secretSpec, secretDef]) *item {
			return typed.NewDefault[itemSpec, itemDef](s.Metadata().ID(), itemSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, s *typed.Resource[secretSpec, secretDef], it *item) error {
			it.TypedSpec().Size = len(s.TypedSpec().Key)
			return nil
		},
	})
}

// serveFlightDaemon serves, on a unix socket, a daemon with a sensitive
// type: its state, its Runtime (escrow), its flight recorder and its
// planner, as a daemon built on resgraph does (the demo has no sensitive
// type). The planner passes no WithSensitive: the registry's definitions
// are what hides the secrets.
func serveFlightDaemon(t *testing.T) (socket string, st state.State) {
	t.Helper()
	reg := codec.NewRegistry()
	codec.MustRegister[secretSpec, secretDef](reg)
	codec.MustRegister[itemSpec, itemDef](reg)
	mem := inmem.NewState()
	rt, err := runtime.New(mem, nil)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterController(escrow()))
	rec, err := recording.New(mem, reg, recording.WithRuntime(rt), recording.WithSource("flight daemon"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, rec.Attach(ctx))
	daemon := plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		return plan.System{Register: func(e controller.Engine) error { return e.RegisterController(escrow()) }}, nil
	}}
	planner := func(ctx context.Context, change []byte) (*plan.Plan, error) {
		c, err := plan.ParseChange(bytes.NewReader(change), reg)
		if err != nil {
			return nil, err
		}
		return plan.Make(ctx, mem, daemon, c)
	}
	gs := grpc.NewServer()
	remote.NewServer(mem, reg).Register(gs)
	obsremote.NewServer(rt.Observe(), obsremote.WithRecorder(rec, reg), obsremote.WithPlanner(planner)).Register(gs)
	socket = filepath.Join(t.TempDir(), "api.sock")
	lis, err := net.Listen("unix", socket)
	require.NoError(t, err)
	done := make(chan struct{}, 3)
	go func() { _ = rt.Run(ctx); done <- struct{}{} }()
	go func() { _ = rec.Run(ctx); done <- struct{}{} }()
	go func() { _ = gs.Serve(lis); done <- struct{}{} }()
	t.Cleanup(func() {
		gs.Stop()
		cancel()
		<-done
		<-done
		<-done
	})
	return socket, mem
}

// TestCT11_NoCommandPrintsASensitiveSpec: against a daemon with a
// sensitive type (its definition says so), resgraphctl plan prints the
// field-level diff of a secret's spec as "(sensitive)" (the daemon's
// planner is given no WithSensitive: the registry's definitions decide),
// a bad change file is refused without echoing its value, and
// resgraphctl record writes the secret into the file (the codec's bytes,
// its kind marked sensitive) but prints nothing of it: neither key is in
// any output.
func TestCT11_NoCommandPrintsASensitiveSpec(t *testing.T) {
	socket, st := serveFlightDaemon(t)
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, typed.NewDefault[secretSpec, secretDef]("db", secretSpec{Holder: "alice", Key: liveKey})))
	waitItemSize(t, st, "db", len(liveKey))
	var outputs []string
	dir := t.TempDir()
	change := filepath.Join(dir, "change.yaml")
	require.NoError(t, os.WriteFile(change, []byte("set:\n  - {type: secret, id: db, spec: {holder: alice, key: "+proposedKey+"}}\n"), 0o600))
	out, errOut, code := ctl(t, socket, "plan", "-f", change)
	require.Zero(t, code, errOut)
	outputs = append(outputs, out, errOut)
	assert.Contains(t, out, "~ Secrets.test.resgraph.dev(vault/db) (proposed)")
	assert.Contains(t, out, "spec.key: (sensitive) → (sensitive)")
	assert.Contains(t, out, "spec.size: 16 → 22", "what escrow would write of it")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("set:\n  - {type: secret, id: db, spec: {key: {nested: "+proposedKey+"}}}\n"), 0o600))
	out, errOut, code = ctl(t, socket, "plan", "-f", bad)
	assert.Equal(t, 1, code, "refused: %s", errOut)
	outputs = append(outputs, out, errOut)

	file := filepath.Join(dir, "incident.rgrec")
	out, errOut, code = ctl(t, socket, "record", "-o", file)
	require.Zero(t, code, errOut)
	outputs = append(outputs, out, errOut)
	reg := codec.NewRegistry()
	codec.MustRegister[secretSpec, secretDef](reg)
	codec.MustRegister[itemSpec, itemDef](reg)
	rec, err := recording.ReadFile(file, reg)
	require.NoError(t, err)
	var sensitive []string
	for _, k := range rec.Kinds {
		if k.Sensitive {
			sensitive = append(sensitive, k.Type)
		}
	}
	assert.Equal(t, []string{"Secrets.test.resgraph.dev"}, sensitive)
	var secrets int
	for _, c := range rec.Changes {
		if c.Resource != nil && c.Resource.Metadata().Type() == "Secrets.test.resgraph.dev" {
			secrets++
			assert.Equal(t, liveKey, c.Resource.Spec().(secretSpec).Key, "the file holds the secret (the codec's bytes)")
		}
	}
	assert.Equal(t, 1, secrets, "the secret's creation is recorded")

	for _, o := range outputs {
		assert.NotContains(t, o, liveKey)
		assert.NotContains(t, o, proposedKey)
	}
	got, err := st.Get(ctx, resource.NewPointer("vault", "Secrets.test.resgraph.dev", "db"))
	require.NoError(t, err)
	assert.Equal(t, liveKey, got.Spec().(secretSpec).Key, "a plan writes nothing")
}

// waitItemSize waits until escrow's item id has the size.
func waitItemSize(t *testing.T, st state.State, id string, size int) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		r, err := st.Get(context.Background(), resource.NewPointer("shop", "Items.test.resgraph.dev", id))
		if err == nil && r.Spec().(itemSpec).Size == size {
			return
		}
		require.False(t, time.Now().After(deadline), "escrow never wrote item %s of size %d", id, size)
		time.Sleep(10 * time.Millisecond) // escrow's write is its own goroutine's
	}
}
