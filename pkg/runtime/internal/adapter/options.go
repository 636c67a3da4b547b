package adapter

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// writeOptions are the state options of a controller's writes, made once
// per controller: an option made per call is an allocation (a closure,
// and the slice of the variadic call), and a write without options of its
// own always passes the same ones. The slices are shared by every call and
// never changed.
type writeOptions struct {
	// create is by ownerIndex.
	create [2][]state.CreateOption
	update []state.UpdateOption
	// modify is by ownerIndex, then by phaseIndex.
	modify [2][3][]state.UpdateOption
	// modifyDefault is modify's entry for the defaults of
	// controller.DefaultModifyOptions: owned, expected phase running.
	modifyDefault []state.UpdateOption
	teardown      []state.TeardownOption
	destroy       []state.DestroyOption
}

// newWriteOptions returns the write options of the controller name.
func newWriteOptions(name string) writeOptions {
	var w writeOptions
	for i, owner := range [2]string{name, ""} {
		w.create[i] = []state.CreateOption{state.WithCreateOwner(owner)}
		w.modify[i][0] = []state.UpdateOption{state.WithUpdateOwner(owner), state.WithExpectedPhaseAny()}
		w.modify[i][1] = []state.UpdateOption{state.WithUpdateOwner(owner), expectRunning}
		w.modify[i][2] = []state.UpdateOption{state.WithUpdateOwner(owner), expectTearingDown}
	}
	w.update = []state.UpdateOption{state.WithUpdateOwner(name)}
	w.modifyDefault = w.modify[ownerIndex(false)][phaseIndex(resource.PhaseRunning)]
	w.teardown = []state.TeardownOption{state.WithTeardownOwner(name)}
	w.destroy = []state.DestroyOption{state.WithDestroyOwner(name)}
	return w
}

// The expected phases of a controller's Modify. Unlike
// state.WithExpectedPhase, which gives every options value a phase of its
// own (an allocation each time it is applied), these point the options to
// the phases below, which nothing writes: the state only reads the
// expected phase.
var (
	phaseRunning, phaseTearingDown = resource.PhaseRunning, resource.PhaseTearingDown

	expectRunning     state.UpdateOption = func(o *state.UpdateOptions) { o.ExpectedPhase = &phaseRunning }
	expectTearingDown state.UpdateOption = func(o *state.UpdateOptions) { o.ExpectedPhase = &phaseTearingDown }
)

// ownerIndex is the index of the owner of a write: 0 for the controller,
// 1 for none.
func ownerIndex(noOwner bool) int {
	if noOwner {
		return 1
	}
	return 0
}

// phaseIndex is the index of an expected phase: 0 for any (nil), 1 for
// running, 2 for tearing down; -1 for a phase that is none of these.
func phaseIndex(p resource.Phase) int {
	switch p {
	case resource.PhaseRunning:
		return 1
	case resource.PhaseTearingDown:
		return 2
	}
	return -1
}

// createNoOwner reports whether opts create without an owner.
func createNoOwner(opts []controller.CreateOption) bool {
	var o controller.CreateOptions
	opt.Apply(&o, opts)
	return o.NoOwner
}

// modifyWith returns the state options of a Modify with the controller's
// options opts (not empty: the defaults are modifyDefault).
func (w *writeOptions) modifyWith(opts []controller.ModifyOption) []state.UpdateOption {
	mo := controller.DefaultModifyOptions()
	opt.Apply(&mo, opts)
	i, ph := ownerIndex(mo.NoOwner), 0
	if mo.ExpectedPhase != nil {
		if ph = phaseIndex(*mo.ExpectedPhase); ph < 0 {
			// Not a phase of package resource: the state refuses it as it
			// would any other write's.
			return []state.UpdateOption{w.modify[i][0][0], state.WithExpectedPhase(*mo.ExpectedPhase)}
		}
	}
	return w.modify[i][ph]
}

// deleteOwner is the owner a Teardown or Destroy acts for: the
// controller's name unless opts (not empty) name another.
func deleteOwner(opts []controller.RemoveOption) (owner string, other bool) {
	var o controller.RemoveOptions
	opt.Apply(&o, opts)
	if o.Owner != nil {
		return *o.Owner, true
	}
	return "", false
}
