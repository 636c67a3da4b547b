package recording_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ns = "rec"

type NoteSpec struct{ N int }
type NoteDef struct{}

func (NoteDef) Definition() typed.Definition {
	return typed.Definition{Type: "Notes.test.resgraph.dev", DefaultNamespace: ns}
}

type Note = typed.Resource[NoteSpec, NoteDef]

type EchoDef struct{}

func (EchoDef) Definition() typed.Definition {
	return typed.Definition{Type: "Echoes.test.resgraph.dev", DefaultNamespace: ns}
}

type Echo = typed.Resource[NoteSpec, EchoDef]

type SecretSpec struct{ Key string }
type SecretDef struct{}

func (SecretDef) Definition() typed.Definition {
	return typed.Definition{Type: "Secrets.test.resgraph.dev", DefaultNamespace: ns}
}

// ResourceDefinition marks secrets sensitive (package definition).
func (SecretDef) ResourceDefinition() definition.Definition {
	return definition.Definition{Sensitive: true}
}

type Secret = typed.Resource[SecretSpec, SecretDef]

func newNote(id string, n int) *Note { return typed.NewDefault[NoteSpec, NoteDef](id, NoteSpec{N: n}) }

var (
	noteKind   = resource.NewKind(ns, NoteDef{}.Definition().Type)
	echoKind   = resource.NewKind(ns, EchoDef{}.Definition().Type)
	secretKind = resource.NewKind(ns, SecretDef{}.Definition().Type)
)

func registry(t testing.TB) *codec.Registry {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NoteSpec, NoteDef](reg))
	require.NoError(t, codec.Register[NoteSpec, EchoDef](reg))
	require.NoError(t, codec.Register[SecretSpec, SecretDef](reg))
	return reg
}

// started runs rec until the test ends and waits until it has read the
// state (Take stops failing with ErrNotStarted).
func started(t *testing.T, rec *recording.Recorder) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	select {
	case <-rec.Started():
	case <-time.After(30 * time.Second):
		t.Fatal("the recorder did not start")
	}
}

// eventually waits for cond, failing the test after a deadline that only
// a broken recorder reaches.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settled waits until a recording's final state is the state's.
func settled(t *testing.T, rec *recording.Recorder, st state.State, kinds ...resource.Kind) *recording.Recording {
	t.Helper()
	var r *recording.Recording
	eventually(t, "the recording caught up with the state", func() bool {
		var err error
		r, err = rec.Take()
		require.NoError(t, err)
		return sameResources(listAll(t, st, kinds...), r.Final) == nil
	})
	return r
}

func listAll(t *testing.T, st state.State, kinds ...resource.Kind) []resource.Resource {
	t.Helper()
	var out []resource.Resource
	for _, k := range kinds {
		l, err := st.List(context.Background(), k)
		require.NoError(t, err)
		out = append(out, l.Items...)
	}
	return out
}

func sameResources(a, b []resource.Resource) error {
	if len(a) != len(b) {
		return errors.New("different counts")
	}
	for i := range a {
		if !resource.Equal(a[i], b[i]) {
			return errors.New(resource.String(a[i]) + " differs")
		}
	}
	return nil
}

// pingPong is a Controller that writes its output ID "x" one more than
// its input "x": two of them, each the other's input, rewrite each other
// for ever (a hot loop).
type pingPong[I, O interface {
	resource.Resource
	TypedSpec() *NoteSpec
	typed.ResourceWithDefinition
}] struct {
	name string
	newO func() O
}

func (p pingPong[I, O]) Name() string { return p.name }
func (p pingPong[I, O]) Inputs() []controller.Input {
	var i I
	d := i.Definition()
	return []controller.Input{{Namespace: d.DefaultNamespace, Type: d.Type, Kind: controller.InputWeak}}
}
func (p pingPong[I, O]) Outputs() []controller.Output {
	var o O
	return []controller.Output{{Type: o.Definition().Type}}
}
func (p pingPong[I, O]) Run(ctx context.Context, rt controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-rt.EventCh():
		}
		var i I
		n := 0
		in, err := safe.ReaderGet[I](ctx, rt, resource.NewPointer(ns, i.Definition().Type, "x"))
		if err == nil {
			n = in.TypedSpec().N
		} else if !state.IsNotFoundError(err) {
			return err
		}
		if err := safe.WriterModify(ctx, rt, p.newO(), func(o O) error { o.TypedSpec().N = n + 1; return nil }); err != nil {
			return err
		}
	}
}
