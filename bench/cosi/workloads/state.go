// Package workloads runs W1..W6 against the COSI runtime
// (github.com/cosi-project/runtime v1.16.2 from the module proxy).
//
// Each function mirrors the function of the same name in
// ../../resgraph/workloads: same parameters (../../common/params), same
// bookkeeping (../../common/measure), same metrics (../../common/runner);
// only the library calls differ.
package workloads

import (
	"fmt"

	"github.com/cosi-project/runtime/pkg/resource"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/cosi-project/runtime/pkg/state/impl/inmem"
	"github.com/cosi-project/runtime/pkg/state/impl/namespaced"

	"github.com/resgraph/resgraph/bench/common/runner"
)

// NewState builds the state the way COSI's own tests and users do:
// state.WrapCore(namespaced.NewState(inmem.Build)). A non-zero histCap raises
// the history ring's maximum capacity (inmem.WithHistoryMaxCapacity; the
// ring starts at COSI's default 100 events per kind and doubles up to it),
// so that watchers which fall behind are not cut off with a buffer overrun.
func NewState(o runner.Options, r *runner.Report) state.State { //nolint:ireturn
	if o.HistCap <= 0 {
		r.Note("history", "COSI default: inmem.Build (100 events per kind, gap 5)")

		return state.WrapCore(namespaced.NewState(inmem.Build))
	}

	r.Note("history", fmt.Sprintf("inmem.WithHistoryMaxCapacity(%d) (initial 100, doubling)", o.HistCap))

	build := inmem.NewStateWithOptions(inmem.WithHistoryMaxCapacity(o.HistCap))

	return state.WrapCore(namespaced.NewState(func(ns resource.Namespace) state.CoreState {
		return build(ns)
	}))
}
