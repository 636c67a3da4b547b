package sim_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/controller/mapper"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// The mutants: each a controller with a plausible mistake of a daemon's
// author, in a scenario whose checks a correct controller passes (the
// same controller with the mistake fixed: fixed = true).

// mutant is a buggy controller and the scenario that runs it.
type mutant struct {
	name string
	// scenario builds the scenario with the mistake (fixed false) or
	// without it.
	scenario func(fixed bool) sim.Scenario
}

var mutants = []mutant{
	{"EventOrderOutput", eventOrderScenario},
	{"MappedDeleteNotMapped", mappedDeleteScenario},
	{"TeardownOrphan", teardownOrphanScenario},
	{"AppendEveryPass", appendScenario},
	{"UnwatchedKind", unwatchedScenario},
	{"NoCleanupOnDelete", noCleanupScenario},
	{"Flapping", flappingScenario},
	{"FailsAfterCrashMidTeardown", crashMidTeardownScenario},
	{"MutatesSnapshot", mutatesSnapshotScenario},
	{"LeaksGoroutine", leakScenario},
	{"SwallowsWriteError", swallowScenario},
}

// More kinds: S (a summary), T (a shared output).
type SDef struct{}

func (SDef) Definition() typed.Definition {
	return typed.Definition{Type: "Ss.sim.test", DefaultNamespace: ns}
}

type TDef struct{}

func (TDef) Definition() typed.Definition {
	return typed.Definition{Type: "Ts.sim.test", DefaultNamespace: ns}
}

type CfgDef struct{}

func (CfgDef) Definition() typed.Definition {
	return typed.Definition{Type: "Cfgs.sim.test", DefaultNamespace: ns}
}

type (
	S   = typed.Resource[NumSpec, SDef]
	T   = typed.Resource[NumSpec, TDef]
	Cfg = typed.Resource[NumSpec, CfgDef]
)

func kindOf[D typed.DefinitionProvider]() resource.Kind {
	var d D
	def := d.Definition()
	return resource.NewKind(def.DefaultNamespace, def.Type)
}

func ptrOf[D typed.DefinitionProvider](id resource.ID) resource.Pointer {
	var d D
	def := d.Definition()
	return resource.NewPointer(def.DefaultNamespace, def.Type, id)
}

func newB(id string) *B { return typed.NewDefault[NumSpec, BDef](id, NumSpec{}) }

func input[D typed.DefinitionProvider](k controller.InputKind) controller.Input {
	var d D
	def := d.Definition()
	return controller.Input{Namespace: def.DefaultNamespace, Type: def.Type, Kind: k}
}

func output[D typed.DefinitionProvider](k controller.OutputKind) controller.Output {
	var d D
	return controller.Output{Type: d.Definition().Type, Kind: k}
}

// ctrl is a Controller built from fields; pass is called on every
// ReconcileEvent, and a failed pass fails Run.
type ctrl struct {
	name    string
	inputs  []controller.Input
	outputs []controller.Output
	pass    func(ctx context.Context, r controller.Runtime, l *zap.Logger) error
	// run, when set, replaces the loop.
	run func(ctx context.Context, r controller.Runtime, l *zap.Logger) error
}

func (c *ctrl) Name() string                 { return c.name }
func (c *ctrl) Inputs() []controller.Input   { return c.inputs }
func (c *ctrl) Outputs() []controller.Output { return c.outputs }
func (c *ctrl) Run(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
	if c.run != nil {
		return c.run(ctx, r, l)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		if err := c.pass(ctx, r, l); err != nil {
			return err
		}
		r.ResetRestartBackoff()
	}
}

// qctrl is a QController built from fields.
type qctrl struct {
	name      string
	settings  controller.QSettings
	reconcile func(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) error
	mapInput  func(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error)
}

func (c *qctrl) Name() string                   { return c.name }
func (c *qctrl) Settings() controller.QSettings { return c.settings }
func (c *qctrl) Reconcile(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
	return c.reconcile(ctx, l, r, p)
}
func (c *qctrl) MapInput(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
	if c.mapInput == nil {
		return nil, nil
	}
	return c.mapInput(ctx, l, r, p)
}

func system(register func(e controller.Engine) error) func(*sim.World) (sim.System, error) {
	return func(*sim.World) (sim.System, error) { return sim.System{Register: register}, nil }
}

func registerAll(cs ...any) func(e controller.Engine) error {
	return func(e controller.Engine) error {
		for _, c := range cs {
			var err error
			switch c := c.(type) {
			case controller.Controller:
				err = e.RegisterController(c)
			case controller.QController:
				err = e.RegisterQController(c)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// running returns the As that are not tearing down.
func running[R resource.Resource](rs []R) []R {
	return slices.DeleteFunc(slices.Clone(rs), func(r R) bool { return r.Metadata().Phase() != resource.PhaseRunning })
}

// mirrorsAs checks that every A has a B with its N, and nothing else.
func mirrorsAs(v sim.View) error {
	as, bs := sim.List[*A](v), sim.List[*B](v)
	for _, b := range bs {
		a, ok := sim.Get[*A](v, b.Metadata().ID())
		if !ok {
			return fmt.Errorf("orphan %s: its A is gone", resource.String(b))
		}
		if b.TypedSpec().N != a.TypedSpec().N {
			return fmt.Errorf("%s has N=%d, its A N=%d", resource.String(b), b.TypedSpec().N, a.TypedSpec().N)
		}
	}
	if len(bs) != len(as) {
		return fmt.Errorf("%d As, %d Bs", len(as), len(bs))
	}
	return nil
}

func workloadA(n int) sim.Workload { return sim.Generate(n, aTemplate(3)) }

// 1. EventOrderOutput: a QController keeps the largest N of the As in S
// "max", but computes it from the A it is reconciling — the last event
// wins — instead of from the state of every A.
func eventOrderScenario(fixed bool) sim.Scenario {
	c := &qctrl{
		name:     "Maxer",
		settings: controller.QSettings{Inputs: []controller.Input{input[ADef](controller.InputQPrimary)}, Outputs: []controller.Output{output[SDef](controller.OutputExclusive)}},
		reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			n := 0
			if fixed {
				as, err := safe.ReaderList[*A](ctx, r, kindOf[ADef]())
				if err != nil {
					return err
				}
				for a := range as.All() {
					if a.Metadata().Phase() == resource.PhaseRunning {
						n = max(n, a.TypedSpec().N)
					}
				}
			} else {
				a, err := safe.ReaderGet[*A](ctx, r, p)
				if state.IsNotFoundError(err) {
					return nil
				}
				if err != nil {
					return err
				}
				n = a.TypedSpec().N
			}
			return safe.WriterModify(ctx, r, typed.NewDefault[NumSpec, SDef]("max", NumSpec{}), func(s *S) error {
				s.TypedSpec().N = n
				return nil
			})
		},
	}
	return sim.Scenario{
		Name: "EventOrderOutput", Setup: system(registerAll(c)), Workload: workloadA(10), Faults: sim.AllFaults(),
		Final: func(v sim.View) error {
			want := 0
			for _, a := range running(sim.List[*A](v)) {
				want = max(want, a.TypedSpec().N)
			}
			if s, ok := sim.Get[*S](v, "max"); ok && s.TypedSpec().N != want {
				return fmt.Errorf("S max N=%d, the largest A N=%d", s.TypedSpec().N, want)
			}
			return nil
		},
	}
}

// cfgFor is the label that names the A a Cfg configures; each Cfg ID
// configures one A for good.
const cfgFor = "for"

var cfgTargets = map[resource.ID]resource.ID{"c0": "a0", "c1": "a1", "c2": "a0", "c3": "a2"}

// 3. MappedDeleteNotMapped: Offsetter keeps B = A + the Ns of the Cfgs
// labelled for that A, Cfg being a mapped input; its MapInput reads the
// Cfg to learn its label, so a destroyed Cfg maps to nothing and its A
// keeps the offset. (Fixed: the label of the destroyed Cfg's last version,
// which the Runtime hands over, rule Q4 — mapper.ByLabel.)
func mappedDeleteScenario(fixed bool) sim.Scenario {
	byLabel := mapper.ByLabel[*Cfg](cfgFor, kindOf[ADef]())
	c := &qctrl{
		name: "Offsetter",
		settings: controller.QSettings{
			Inputs:  []controller.Input{input[ADef](controller.InputQPrimary), input[CfgDef](controller.InputQMapped)},
			Outputs: []controller.Output{output[BDef](controller.OutputExclusive)},
		},
		mapInput: func(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
			if fixed {
				return byLabel.MapPointer(ctx, l, r, p)
			}
			cfg, err := safe.ReaderGet[*Cfg](ctx, r, p)
			if state.IsNotFoundError(err) {
				return nil, nil // gone: nothing to map, or so it seems
			}
			if err != nil {
				return nil, err
			}
			target, _ := cfg.Metadata().Labels().Get(cfgFor)
			return []resource.Pointer{ptrOf[ADef](target)}, nil
		},
		reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			a, err := safe.ReaderGet[*A](ctx, r, p)
			if state.IsNotFoundError(err) {
				if err := r.Destroy(ctx, ptrOf[BDef](p.ID())); err != nil && !state.IsNotFoundError(err) {
					return err
				}
				return nil
			}
			if err != nil {
				return err
			}
			cfgs, err := safe.ReaderList[*Cfg](ctx, r, kindOf[CfgDef]())
			if err != nil {
				return err
			}
			return safe.WriterModify(ctx, r, newB(p.ID()), func(b *B) error {
				b.TypedSpec().N = a.TypedSpec().N + offsetOf(p.ID(), cfgs.Slice())
				return nil
			})
		},
	}
	cfgTemplate := sim.Template{IDs: []resource.ID{"c0", "c1", "c2", "c3"}, New: func(id resource.ID, rng *rand.Rand) resource.Resource {
		cfg := typed.NewDefault[NumSpec, CfgDef](id, NumSpec{N: 100 * (1 + rng.IntN(9))})
		cfg.Metadata().Labels().Set(cfgFor, cfgTargets[id])
		return cfg
	}}
	return sim.Scenario{
		Name: "MappedDeleteNotMapped", Setup: system(registerAll(c)), Workload: sim.Generate(14, aTemplate(3), cfgTemplate), Faults: sim.AllFaults(),
		Final: func(v sim.View) error {
			for _, a := range sim.List[*A](v) {
				want := a.TypedSpec().N + offsetOf(a.Metadata().ID(), sim.List[*Cfg](v))
				if b, ok := sim.Get[*B](v, a.Metadata().ID()); !ok || b.TypedSpec().N != want {
					return fmt.Errorf("no B with N=%d for %s (A + its Cfgs)", want, resource.String(a))
				}
			}
			return nil
		},
	}
}

// offsetOf sums the Ns of the Cfgs labelled for the A id.
func offsetOf(id resource.ID, cfgs []*Cfg) int {
	n := 0
	for _, c := range cfgs {
		if v, _ := c.Metadata().Labels().Get(cfgFor); v == id {
			n += c.TypedSpec().N
		}
	}
	return n
}

// mirror is a QController that keeps a B per A, holding a finalizer on the
// A so that its B goes first. forgetB: the teardown forgets the B, and an
// A gone is nothing to do (2); strictDestroy: the teardown's destroy of B
// fails when B is gone already (8).
func mirror(forgetB, strictDestroy bool) *qctrl {
	const name = "Mirror"
	return &qctrl{
		name:     name,
		settings: controller.QSettings{Inputs: []controller.Input{input[ADef](controller.InputQPrimary)}, Outputs: []controller.Output{output[BDef](controller.OutputExclusive)}},
		reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			bPtr := ptrOf[BDef](p.ID())
			a, err := safe.ReaderGet[*A](ctx, r, p)
			switch {
			case state.IsNotFoundError(err) && forgetB:
				return nil
			case state.IsNotFoundError(err):
				if err := r.Destroy(ctx, bPtr); err != nil && !state.IsNotFoundError(err) {
					return err
				}
				return nil
			case err != nil:
				return err
			}
			if a.Metadata().Phase() == resource.PhaseTearingDown {
				if !forgetB {
					err := r.Destroy(ctx, bPtr)
					if err != nil && (strictDestroy || !state.IsNotFoundError(err)) {
						return fmt.Errorf("destroy output: %w", err)
					}
				}
				return r.RemoveFinalizer(ctx, p, name)
			}
			if err := r.AddFinalizer(ctx, p, name); err != nil {
				return err
			}
			return safe.WriterModify(ctx, r, newB(p.ID()), func(b *B) error {
				b.TypedSpec().N = a.TypedSpec().N
				return nil
			})
		},
	}
}

// 2. TeardownOrphan: a QController holds a finalizer on its input, and
// when the input tears down it lets the input go without destroying its
// output: an orphan.
func teardownOrphanScenario(fixed bool) sim.Scenario {
	return sim.Scenario{
		Name: "TeardownOrphan", Setup: system(registerAll(mirror(!fixed, false))), Workload: workloadA(10), Faults: sim.AllFaults(),
		Final: mirrorsAs,
	}
}

// 8. FailsAfterCrashMidTeardown: the same QController, correct until a
// crash lands between the destroy of its output and the release of its
// finalizer: the retry's destroy finds nothing and fails, for ever.
func crashMidTeardownScenario(fixed bool) sim.Scenario {
	return sim.Scenario{
		Name: "FailsAfterCrashMidTeardown", Setup: system(registerAll(mirror(false, !fixed))), Workload: workloadA(20), Faults: sim.AllFaults(),
		Final: mirrorsAs,
	}
}

// copier is a Controller that keeps a B per A; set computes the B's spec
// from the A's; cleanup tracks and cleans its outputs; readOnly reads the
// As as shared snapshots; swallow logs a failed write and goes on.
func copier(set func(a *A, b *B), cleanup, readOnly, swallow bool) *ctrl {
	return &ctrl{
		name: "Copier", inputs: []controller.Input{input[ADef](controller.InputWeak)}, outputs: []controller.Output{output[BDef](controller.OutputExclusive)},
		pass: func(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
			if cleanup {
				r.StartTrackingOutputs()
			}
			var opts []state.ListOption
			if readOnly {
				opts = append(opts, state.WithReadOnlyList())
			}
			as, err := safe.ReaderList[*A](ctx, r, kindOf[ADef](), opts...)
			if err != nil {
				return err
			}
			for a := range as.All() {
				if err := writeOutput(ctx, r, func() *B { return newB(a.Metadata().ID()) }, func(b *B) error {
					set(a, b)
					return nil
				}); err != nil {
					if swallow {
						l.Warn("write failed", zap.Error(err))
						continue
					}
					return err
				}
			}
			if cleanup {
				return r.CleanupOutputs(ctx, kindOf[BDef]())
			}
			return nil
		},
	}
}

func setN(a *A, b *B) { b.TypedSpec().N = a.TypedSpec().N }

// writeOutput writes an output of a Controller that cleans up its outputs
// (CleanupOutputs): an output that a cleanup left tearing down (its
// destroy failed) is destroyed first, then written anew. (Without this,
// a failed destroy followed by the return of the input fails every later
// pass: the simulator found it in these tests' first controllers.)
func writeOutput[R resource.Resource](ctx context.Context, r controller.Runtime, fresh func() R, fn func(R) error) error {
	err := safe.WriterModify(ctx, r, fresh(), fn)
	if !state.IsPhaseConflictError(err) {
		return err
	}
	if err := r.Destroy(ctx, fresh().Metadata()); err != nil && !state.IsNotFoundError(err) {
		return err
	}
	return safe.WriterModify(ctx, r, fresh(), fn)
}

// 4. AppendEveryPass: a Controller that appends the input's value to its
// output's list on every pass instead of setting it.
func appendScenario(fixed bool) sim.Scenario {
	set := func(a *A, b *B) {
		b.TypedSpec().N = a.TypedSpec().N
		if fixed {
			b.TypedSpec().List = []int{a.TypedSpec().N}
		} else {
			b.TypedSpec().List = append(b.TypedSpec().List, a.TypedSpec().N)
		}
	}
	return sim.Scenario{
		Name: "AppendEveryPass", Setup: system(registerAll(copier(set, true, false, false))), Workload: workloadA(10), Faults: sim.AllFaults(),
		Final: func(v sim.View) error {
			for _, b := range sim.List[*B](v) {
				if l := b.TypedSpec().List; len(l) != 1 || l[0] != b.TypedSpec().N {
					return fmt.Errorf("%s: List %v, want [%d]", resource.String(b), l, b.TypedSpec().N)
				}
			}
			return mirrorsAs(v)
		},
	}
}

// 6. NoCleanupOnDelete: a Controller that writes a B per A and never
// cleans up the Bs whose A is gone.
func noCleanupScenario(fixed bool) sim.Scenario {
	return sim.Scenario{
		Name: "NoCleanupOnDelete", Setup: system(registerAll(copier(setN, fixed, false, false))), Workload: workloadA(10), Faults: sim.AllFaults(),
		Final: mirrorsAs,
	}
}

// 9. MutatesSnapshot: a Controller that reads its inputs as shared
// snapshots and clamps their N in place before copying it.
func mutatesSnapshotScenario(fixed bool) sim.Scenario {
	set := func(a *A, b *B) {
		if fixed {
			b.TypedSpec().N = min(a.TypedSpec().N, 5)
			return
		}
		a.TypedSpec().N = min(a.TypedSpec().N, 5) // a shared snapshot: rule S7 forbids it
		b.TypedSpec().N = a.TypedSpec().N
	}
	return sim.Scenario{
		Name: "MutatesSnapshot", Setup: system(registerAll(copier(set, true, true, false))), Workload: workloadA(10), Faults: sim.AllFaults(),
	}
}

// 11. SwallowsWriteError: a Controller that writes the B of each A whose
// version it has not handled yet, and that logs a failed write and marks
// the A handled anyway: nothing retries it.
func swallowScenario(fixed bool) sim.Scenario {
	c := &ctrl{name: "Syncer", inputs: []controller.Input{input[ADef](controller.InputWeak)}, outputs: []controller.Output{output[BDef](controller.OutputExclusive)}}
	c.run = func(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
		// handled: the version (and creation, which tells the lives of
		// an ID apart: versions start over) each B was written for.
		type stamp struct {
			created time.Time
			version resource.Version
		}
		handled := map[resource.ID]stamp{}
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-r.EventCh():
			}
			as, err := safe.ReaderList[*A](ctx, r, kindOf[ADef]())
			if err != nil {
				return err
			}
			for a := range as.All() {
				id, ver := a.Metadata().ID(), stamp{a.Metadata().Created(), a.Metadata().Version()}
				if v, ok := handled[id]; ok && v.version.Equal(ver.version) && v.created.Equal(ver.created) {
					continue // written for this version already
				}
				if err := writeOutput(ctx, r, func() *B { return newB(id) }, func(b *B) error {
					b.TypedSpec().N = a.TypedSpec().N
					return nil
				}); err != nil {
					if fixed {
						return err
					}
					l.Warn("write failed", zap.Error(err)) // and marked handled below
				}
				handled[id] = ver
			}
			bs, err := safe.ReaderList[*B](ctx, r, kindOf[BDef]())
			if err != nil {
				return err
			}
			for b := range bs.All() {
				id := b.Metadata().ID()
				if _, ok := as.Find(func(a *A) bool { return a.Metadata().ID() == id }); ok {
					continue
				}
				if err := r.Destroy(ctx, b.Metadata()); err != nil && !state.IsNotFoundError(err) {
					return err
				}
				delete(handled, id)
			}
			r.ResetRestartBackoff()
		}
	}
	return sim.Scenario{
		Name: "SwallowsWriteError", Setup: system(registerAll(c)), Workload: workloadA(10), Faults: flakyFaults(),
		Final: mirrorsAs,
	}
}

// 5. UnwatchedKind: Routes writes a T per A and keeps in S "count" the
// number of every T, its own and those Statics writes (T is a shared
// output of both): it reads T, which it may as an output type, but does
// not declare it an input, so it misses Statics' changes.
func unwatchedScenario(fixed bool) sim.Scenario {
	routesInputs := []controller.Input{input[ADef](controller.InputWeak)}
	if fixed {
		routesInputs = append(routesInputs, input[TDef](controller.InputWeak))
	}
	routes := &ctrl{
		name: "Routes", inputs: routesInputs,
		outputs: []controller.Output{output[TDef](controller.OutputShared), output[SDef](controller.OutputExclusive)},
		pass: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			r.StartTrackingOutputs()
			as, err := safe.ReaderList[*A](ctx, r, kindOf[ADef]())
			if err != nil {
				return err
			}
			for a := range as.All() {
				if err := writeOutput(ctx, r, func() *T { return typed.NewDefault[NumSpec, TDef]("a-"+a.Metadata().ID(), NumSpec{}) }, func(t *T) error {
					t.TypedSpec().N = a.TypedSpec().N
					return nil
				}); err != nil {
					return err
				}
			}
			ts, err := safe.ReaderList[*T](ctx, r, kindOf[TDef]())
			if err != nil {
				return err
			}
			if err := safe.WriterModify(ctx, r, typed.NewDefault[NumSpec, SDef]("count", NumSpec{}), func(s *S) error {
				s.TypedSpec().N = ts.Len()
				return nil
			}); err != nil {
				return err
			}
			return r.CleanupOutputs(ctx, kindOf[TDef]())
		},
	}
	statics := &ctrl{
		name: "Statics", inputs: []controller.Input{input[BDef](controller.InputWeak)},
		outputs: []controller.Output{output[TDef](controller.OutputShared)},
		pass: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			r.StartTrackingOutputs()
			bs, err := safe.ReaderList[*B](ctx, r, kindOf[BDef]())
			if err != nil {
				return err
			}
			for b := range bs.All() {
				if err := writeOutput(ctx, r, func() *T { return typed.NewDefault[NumSpec, TDef]("b-"+b.Metadata().ID(), NumSpec{}) }, func(t *T) error {
					t.TypedSpec().N = b.TypedSpec().N
					return nil
				}); err != nil {
					return err
				}
			}
			return r.CleanupOutputs(ctx, kindOf[TDef]())
		},
	}
	bTemplate := sim.Template{IDs: []resource.ID{"b0", "b1", "b2"}, New: func(id resource.ID, rng *rand.Rand) resource.Resource {
		return typed.NewDefault[NumSpec, BDef](id, NumSpec{N: rng.IntN(10)})
	}}
	return sim.Scenario{
		Name: "UnwatchedKind", Setup: system(registerAll(routes, statics)), Workload: sim.Generate(10, aTemplate(3), bTemplate), Faults: sim.AllFaults(),
		Final: func(v sim.View) error {
			n := len(sim.List[*T](v))
			if s, ok := sim.Get[*S](v, "count"); ok && s.TypedSpec().N != n {
				return fmt.Errorf("S count N=%d, but there are %d Ts", s.TypedSpec().N, n)
			}
			return nil
		},
	}
}

// 7. Flapping: Opposite keeps C "x" the opposite of B "x" (1-N), Follower
// keeps B "x" equal to C "x": each undoes the other for ever. (Fixed:
// Follower keeps B the opposite of C too, which agrees with Opposite.)
func flappingScenario(fixed bool) sim.Scenario {
	opposite := &ctrl{
		name: "Opposite", inputs: []controller.Input{input[BDef](controller.InputWeak)}, outputs: []controller.Output{output[CDef](controller.OutputExclusive)},
		pass: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			n := 0
			b, err := safe.ReaderGet[*B](ctx, r, ptrOf[BDef]("x"))
			switch {
			case err == nil:
				n = b.TypedSpec().N
			case !state.IsNotFoundError(err):
				return err
			}
			return safe.WriterModify(ctx, r, typed.NewDefault[NumSpec, CDef]("x", NumSpec{}), func(c *C) error {
				c.TypedSpec().N = 1 - n
				return nil
			})
		},
	}
	follower := &ctrl{
		name: "Follower", inputs: []controller.Input{input[CDef](controller.InputWeak)}, outputs: []controller.Output{output[BDef](controller.OutputExclusive)},
		pass: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			c, err := safe.ReaderGet[*C](ctx, r, ptrOf[CDef]("x"))
			if state.IsNotFoundError(err) {
				return nil
			}
			if err != nil {
				return err
			}
			return safe.WriterModify(ctx, r, newB("x"), func(b *B) error {
				if fixed {
					b.TypedSpec().N = 1 - c.TypedSpec().N
				} else {
					b.TypedSpec().N = c.TypedSpec().N
				}
				return nil
			})
		},
	}
	return sim.Scenario{Name: "Flapping", Setup: system(registerAll(opposite, follower)), Faults: sim.AllFaults()}
}

// 10. LeaksGoroutine: a Controller that starts a goroutine to apply its
// updates, fed by a channel it never closes: every Run leaves it behind.
func leakScenario(fixed bool) sim.Scenario {
	c := &ctrl{
		name: "Applier", inputs: []controller.Input{input[ADef](controller.InputWeak)}, outputs: []controller.Output{output[BDef](controller.OutputExclusive)},
	}
	c.run = func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
		updates := make(chan *A)
		errs := make(chan error, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for a := range updates {
				errs <- safe.WriterModify(ctx, r, newB(a.Metadata().ID()), func(b *B) error {
					b.TypedSpec().N = a.TypedSpec().N
					return nil
				})
			}
		}()
		if fixed {
			defer func() {
				close(updates)
				<-done
			}()
		}
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-r.EventCh():
			}
			as, err := safe.ReaderList[*A](ctx, r, kindOf[ADef]())
			if err != nil {
				return err
			}
			for a := range as.All() {
				updates <- a
				if err := <-errs; err != nil {
					return err
				}
			}
		}
	}
	return sim.Scenario{
		Name: "LeaksGoroutine", Setup: system(registerAll(c)), Workload: workloadA(6), Faults: sim.AllFaults(),
		NoReference: true, // the Bs of removed As stay: not this mutant's point
		Final: func(v sim.View) error {
			for _, a := range sim.List[*A](v) {
				if b, ok := sim.Get[*B](v, a.Metadata().ID()); !ok || b.TypedSpec().N != a.TypedSpec().N {
					return fmt.Errorf("no B with N=%d for %s", a.TypedSpec().N, resource.String(a))
				}
			}
			return nil
		},
	}
}

// flakyFaults is AllFaults over a flaky backend: a scenario about the
// handling of write errors turns transient errors up.
func flakyFaults() sim.Faults {
	f := sim.AllFaults()
	f.Transient = 0.1
	return f
}
