package plan_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "plan"

type NSpec struct {
	N int `json:"n"`
}
type NoteDef struct{}

func (NoteDef) Definition() typed.Definition {
	return typed.Definition{Type: "Notes.test.resgraph.dev", DefaultNamespace: ns}
}

// ResourceDefinition marks notes sensitive (package definition): a
// plan of a change read with a registry of them never prints their specs.
func (NoteDef) ResourceDefinition() definition.Definition {
	return definition.Definition{Sensitive: true}
}

type Note = typed.Resource[NSpec, NoteDef]

type EchoDef struct{}

func (EchoDef) Definition() typed.Definition {
	return typed.Definition{Type: "Echoes.test.resgraph.dev", DefaultNamespace: ns}
}

type Echo = typed.Resource[NSpec, EchoDef]

func note(id string, n int) *Note { return typed.NewDefault[NSpec, NoteDef](id, NSpec{N: n}) }

// printer is the daemon's world: it prints each echo's value once.
type printer struct {
	mu      sync.Mutex
	printed map[string]int
	log     []string
}

func (p *printer) print(id string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.printed[id]; ok && v == n {
		return
	}
	p.printed[id] = n
	p.log = append(p.log, fmt.Sprintf("print echo %s = %d", id, n))
}

func (p *printer) actions() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// echoer echoes each Note as an Echo of N+1 (with finalizers on the
// notes: an echo goes before its note), printing it.
func echoer(p *printer) controller.Controller {
	return transform.NewController(transform.Settings[*Note, *Echo]{
		Name: "echoer",
		MapMetadataFunc: func(n *Note) *Echo {
			return typed.NewDefault[NSpec, EchoDef](n.Metadata().ID(), NSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, n *Note, e *Echo) error {
			e.TypedSpec().N = n.TypedSpec().N + 1
			p.print(n.Metadata().ID(), e.TypedSpec().N)
			return nil
		},
	}, transform.WithInputFinalizers())
}

// daemon is the echoing daemon: its world's printer starts with the
// echoes the state holds printed.
func daemon() plan.Daemon {
	return plan.Daemon{Setup: func(initial []resource.Resource) (plan.System, error) {
		p := &printer{printed: map[string]int{}}
		for _, r := range initial {
			if e, ok := r.(*Echo); ok {
				p.printed[e.Metadata().ID()] = e.TypedSpec().N
			}
		}
		return plan.System{
			Register: func(e controller.Engine) error { return e.RegisterController(echoer(p)) },
			Actions:  p.actions,
		}, nil
	}}
}

// live runs the daemon over a fresh state with notes a=1 and c=3, and
// returns the state once it settled.
func live(t *testing.T) (state.State, *runtime.Runtime) {
	t.Helper()
	env := runtimetest.Start(t)
	sys, err := daemon().Setup(nil)
	require.NoError(t, err)
	require.NoError(t, sys.Register(env.Runtime))
	for _, n := range []*Note{note("a", 1), note("c", 3)} {
		require.NoError(t, env.State.Create(context.Background(), n))
	}
	runtimetest.Settle(t, env.Runtime)
	return env.State, env.Runtime
}

var change = plan.Change{
	Set:    []resource.Resource{note("a", 5), note("b", 1)},
	Remove: []resource.Pointer{resource.NewPointer(ns, NoteDef{}.Definition().Type, "c")},
}

// TestPL4_WhatTheChangeWouldDo: a plan lists the resources created,
// updated field by field, and destroyed, the proposed ones and those the
// daemon would write (PL5: by whom and why), and the world actions.
func TestPL4_WhatTheChangeWouldDo(t *testing.T) {
	st, _ := live(t)
	p, err := plan.Make(context.Background(), st, daemon(), change)
	require.NoError(t, err)
	require.True(t, p.Converged, p.Why)
	assert.Empty(t, p.Drift)
	var got []string
	for _, c := range p.Changes {
		line := c.Op.String() + " " + c.Pointer.String()
		for _, f := range c.Fields {
			if c.Op == plan.Update {
				line += fmt.Sprintf(" %s:%s→%s", f.Path, f.Before, f.After)
			}
		}
		got = append(got, line)
	}
	assert.Equal(t, []string{
		"update Echoes.test.resgraph.dev(plan/a) spec.n:2→6",
		"create Echoes.test.resgraph.dev(plan/b)",
		"destroy Echoes.test.resgraph.dev(plan/c)",
		"update Notes.test.resgraph.dev(plan/a) spec.n:1→5",
		"create Notes.test.resgraph.dev(plan/b)",
		"destroy Notes.test.resgraph.dev(plan/c)",
	}, got)
	echoA := p.Changes[0]
	assert.Equal(t, []string{"echoer"}, echoA.Writers)
	assert.Equal(t, []string{"Notes.test.resgraph.dev(plan/a) (the change)", "echoer modify Echoes.test.resgraph.dev(plan/a)"}, echoA.Chain, "PL5")
	assert.True(t, p.Changes[3].Proposed)
	assert.Equal(t, []string{"print echo a = 6", "print echo b = 2"}, p.World)
	var text bytes.Buffer
	require.NoError(t, p.WriteText(&text))
	assert.Contains(t, text.String(), "Plan: 2 to create, 2 to update, 2 to destroy, 2 world actions.")
}

// TestPL4_ASensitiveSpecIsNeverPrinted: a plan of a change read with a
// registry whose definitions mark notes sensitive prints "(sensitive)"
// for their spec values, before and after, without WithSensitive; other
// types' values are printed.
func TestPL4_ASensitiveSpecIsNeverPrinted(t *testing.T) {
	st, _ := live(t)
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NSpec, NoteDef](reg))
	c, err := plan.ParseChange(strings.NewReader("set: [{type: Notes.test.resgraph.dev, id: a, spec: {n: 424242}}]"), reg)
	require.NoError(t, err)
	p, err := plan.Make(context.Background(), st, daemon(), c)
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, p.WriteText(&text))
	assert.NotContains(t, text.String(), "424242", "the note's new value")
	assert.Contains(t, text.String(), "spec.n: (sensitive) → (sensitive)")
	assert.Contains(t, text.String(), "spec.n: 2 → 424243", "an echo is not sensitive")
}

// TestPL1_TheLiveStateIsNeverWritten: nothing of the live state changes
// while a plan runs (no event on a watch of every kind).
func TestPL1_TheLiveStateIsNeverWritten(t *testing.T) {
	st, _ := live(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan state.Event, 64)
	for _, typ := range []string{NoteDef{}.Definition().Type, EchoDef{}.Definition().Type} {
		require.NoError(t, st.WatchKind(ctx, resource.NewKind(ns, typ), ch))
	}
	_, err := plan.Make(context.Background(), st, daemon(), change)
	require.NoError(t, err)
	select {
	case ev := <-ch:
		t.Fatalf("the live state changed: %v %s", ev.Type, resource.String(ev.Resource))
	default:
	}
}

// TestPL2_RefusesWhatIsNotTheUsersToWrite: a change naming an unknown
// kind, or a controller's output, is refused with the reason for each.
func TestPL2_RefusesWhatIsNotTheUsersToWrite(t *testing.T) {
	st, _ := live(t)
	bad := plan.Change{
		Set:    []resource.Resource{typed.NewDefault[NSpec, EchoDef]("a", NSpec{N: 9}), note("x", 1)},
		Remove: []resource.Pointer{resource.NewPointer("elsewhere", NoteDef{}.Definition().Type, "a")},
	}
	bad.Set[1].Metadata().Labels().Set("k", "v")
	_, err := plan.Make(context.Background(), st, daemon(), bad)
	var refused *plan.RefusedError
	require.ErrorAs(t, err, &refused)
	assert.True(t, state.IsInvalidError(err))
	require.Len(t, refused.Reasons, 2)
	assert.Contains(t, refused.Reasons[0], "the daemon has no kind Notes.test.resgraph.dev(elsewhere)")
	assert.Contains(t, refused.Reasons[1], "Echoes.test.resgraph.dev is written by echoer")
}

// TestPL2_RefusesRemovingWhatDoesNotExist: a change that removes a
// resource the live state does not hold is refused with a *RefusedError
// naming it; one the change sets, then removes, is not.
func TestPL2_RefusesRemovingWhatDoesNotExist(t *testing.T) {
	st, _ := live(t)
	typ := NoteDef{}.Definition().Type
	_, err := plan.Make(context.Background(), st, daemon(), plan.Change{
		Remove: []resource.Pointer{resource.NewPointer(ns, typ, "c"), resource.NewPointer(ns, typ, "nosuch")},
	})
	var refused *plan.RefusedError
	require.ErrorAs(t, err, &refused)
	assert.True(t, state.IsInvalidError(err))
	assert.Equal(t, []string{"Notes.test.resgraph.dev(" + ns + "/nosuch): there is no such resource to remove"}, refused.Reasons)

	_, err = plan.Make(context.Background(), st, daemon(), plan.Change{
		Set:    []resource.Resource{note("new", 1)},
		Remove: []resource.Pointer{resource.NewPointer(ns, typ, "new")},
	})
	assert.NoError(t, err)
}

// TestPL3_ALoopIsReportedAsSuch: a daemon that keeps rewriting what it
// reads does not converge, and the plan says so with the loop.
func TestPL3_ALoopIsReportedAsSuch(t *testing.T) {
	st := inmem.NewState()
	looping := plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		return plan.System{Register: func(e controller.Engine) error { return e.RegisterController(counter{}) }}, nil
	}}
	p, err := plan.Make(context.Background(), st, looping, plan.Change{Set: []resource.Resource{note("x", 1)}},
		plan.WithCommitBound(500), plan.WithTimeout(time.Minute))
	require.NoError(t, err)
	assert.False(t, p.Converged)
	assert.True(t, strings.Contains(p.Why, "hot loop") || strings.Contains(p.Why, "more than 500 commits"), p.Why)
	assert.NotEmpty(t, p.Loop)
	var text bytes.Buffer
	require.NoError(t, p.WriteText(&text))
	assert.Contains(t, text.String(), "does NOT reach a fixed point")
}

// counter echoes each note as its echo's value plus one: it reads its
// own output, and so rewrites it for ever.
type counter struct{}

func (counter) Name() string { return "counter" }
func (counter) Inputs() []controller.Input {
	return []controller.Input{
		{Namespace: ns, Type: NoteDef{}.Definition().Type, Kind: controller.InputWeak},
		{Namespace: ns, Type: EchoDef{}.Definition().Type, Kind: controller.InputWeak},
	}
}
func (counter) Outputs() []controller.Output {
	return []controller.Output{{Type: EchoDef{}.Definition().Type}}
}
func (counter) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	return eachNote(ctx, r, func(n *Note) error {
		echo := typed.NewDefault[NSpec, EchoDef](n.Metadata().ID(), NSpec{})
		return safe.WriterModify(ctx, r, echo, func(e *Echo) error { e.TypedSpec().N++; return nil })
	})
}

// eachNote is a Controller's Run that calls fn for every note at each
// wake-up, until ctx is done.
func eachNote(ctx context.Context, r controller.Runtime, fn func(*Note) error) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		notes, err := safe.ReaderListAll[*Note](ctx, r)
		if err != nil {
			return err
		}
		for n := range notes.All() {
			if err := fn(n); err != nil {
				return err
			}
		}
	}
}

// TestParseChange reads a YAML change file, resolving types by their
// aliases and default namespaces.
func TestParseChange(t *testing.T) {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NSpec, NoteDef](reg))
	c, err := plan.ParseChange(strings.NewReader(`
set:
  - {type: Notes.test.resgraph.dev, id: a, labels: {k: v}, spec: {n: 5}}
remove:
  - {type: notes.test.resgraph.dev, namespace: other, id: c}
`), reg)
	require.NoError(t, err)
	require.Len(t, c.Set, 1)
	assert.Equal(t, 5, c.Set[0].(*Note).TypedSpec().N)
	v, _ := c.Set[0].Metadata().Labels().Get("k")
	assert.Equal(t, "v", v)
	assert.Equal(t, "Notes.test.resgraph.dev(other/c)", resource.PointerString(c.Remove[0]))
	for _, bad := range []string{"set: [{type: Unknown, id: a}]", "set: [{type: Notes.test.resgraph.dev, id: a, spec: {n: nope}}]", "remove: [{type: notes.test.resgraph.dev}]", "sett: []"} {
		_, err = plan.ParseChange(strings.NewReader(bad), reg)
		assert.True(t, state.IsInvalidError(err), "%s: %v is of the invalid class", bad, err)
		if strings.HasPrefix(bad, "set:") {
			assert.ErrorContains(t, err, "set[0]")
		}
	}
}
