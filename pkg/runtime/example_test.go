package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// Two resource types: a Number, written by the user, and a Label, which
// the examples' controllers derive from it.
type (
	NumberSpec struct{ N int }
	NumberDef  struct{}
	Number     = typed.Resource[NumberSpec, NumberDef]
	LabelSpec  struct{ Text string }
	LabelDef   struct{}
	Label      = typed.Resource[LabelSpec, LabelDef]
)

func (NumberDef) Definition() typed.Definition {
	return typed.Definition{Type: "Numbers.example.resgraph.dev", DefaultNamespace: "default"}
}

func (LabelDef) Definition() typed.Definition {
	return typed.Definition{Type: "Labels.example.resgraph.dev", DefaultNamespace: "default"}
}

// labeller is a Controller: on every wake-up it reads all its inputs (the
// Numbers) and writes a Label for each.
type labeller struct{}

func (labeller) Name() string { return "labeller" }

func (labeller) Inputs() []controller.Input {
	return []controller.Input{controller.InputFor[NumberDef](controller.InputWeak)}
}

func (labeller) Outputs() []controller.Output {
	return []controller.Output{controller.OutputFor[LabelDef](controller.OutputExclusive)}
}

func (labeller) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		numbers, err := safe.ReaderListAll[*Number](ctx, r)
		if err != nil {
			return err
		}
		for n := range numbers.All() {
			label := typed.NewDefault[LabelSpec, LabelDef](n.Metadata().ID(), LabelSpec{})
			if err := safe.WriterModify(ctx, r, label, func(l *Label) error {
				l.TypedSpec().Text = "number " + strconv.Itoa(n.TypedSpec().N)
				return nil
			}); err != nil {
				return err
			}
		}
	}
}

// A Runtime with one Controller: Run until the context is canceled; the
// Controller writes a Label for the Number an outside writer created.
func ExampleNew() {
	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		panic(err)
	}
	if err := rt.RegisterController(labeller{}); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	if err := st.Create(ctx, typed.NewDefault[NumberSpec, NumberDef]("one", NumberSpec{N: 1})); err != nil {
		panic(err)
	}
	printLabel(ctx, st, "one")

	cancel()
	if err := <-done; err != nil { // Run returns nil once ctx is canceled
		panic(err)
	}
	// Output:
	// Label one: "number 1", owner labeller
}

// qlabeller is a QController: the Runtime queues the pointer of every
// Number that changes and calls Reconcile with it, one pointer at a time
// per worker.
type qlabeller struct{}

func (qlabeller) Name() string { return "qlabeller" }

func (qlabeller) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:  []controller.Input{controller.InputFor[NumberDef](controller.InputQPrimary)},
		Outputs: []controller.Output{controller.OutputFor[LabelDef](controller.OutputExclusive)},
	}
}

func (qlabeller) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	n, err := safe.ReaderGet[*Number](ctx, r, ptr)
	if state.IsNotFoundError(err) {
		return nil // gone: a full example would remove its Label
	}
	if err != nil {
		return err
	}
	label := typed.NewDefault[LabelSpec, LabelDef](ptr.ID(), LabelSpec{})
	return safe.WriterModify(ctx, r, label, func(l *Label) error {
		l.TypedSpec().Text = "number " + strconv.Itoa(n.TypedSpec().N)
		return nil
	})
}

// MapInput is called for mapped inputs only; qlabeller has none.
func (qlabeller) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// A Runtime with one QController: the same labels, one Number at a time.
func ExampleNew_qController() {
	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		panic(err)
	}
	if err := rt.RegisterQController(qlabeller{}); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	if err := st.Create(ctx, typed.NewDefault[NumberSpec, NumberDef]("two", NumberSpec{N: 2})); err != nil {
		panic(err)
	}
	printLabel(ctx, st, "two")

	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// Label two: "number 2", owner qlabeller
}

// printLabel waits for the Label of id to exist and prints it.
func printLabel(ctx context.Context, st state.State, id resource.ID) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	l, err := safe.StateWatchFor[*Label](ctx, st, resource.NewPointer("default", "Labels.example.resgraph.dev", id),
		state.WithEventTypes(state.Created, state.Updated))
	if err != nil {
		panic(err)
	}
	fmt.Printf("Label %s: %q, owner %s\n", id, l.TypedSpec().Text, l.Metadata().Owner())
}
