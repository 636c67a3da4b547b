// Package workloads runs W1..W6 against resgraph (github.com/resgraph/resgraph,
// public API of shared/API.md only).
//
// Each function mirrors the function of the same name in
// ../../cosi/workloads: same parameters (../../common/params), same
// bookkeeping (../../common/measure), same metrics (../../common/runner);
// only the library calls differ.
package workloads

import (
	"errors"

	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"

	"github.com/resgraph/resgraph/bench/common/runner"
)

var errHistCap = errors.New("resgraph runs with its default options: -histcap is COSI's option")

// NewState returns resgraph's in-memory state with default options. Its
// contract (S12) says that a slow watcher is never cut off for lack of
// history, so nothing is tuned here.
func NewState(o runner.Options, r *runner.Report) (state.State, error) { //nolint:ireturn
	if o.HistCap != 0 {
		return nil, errHistCap
	}

	r.Note("state", "inmem.NewState() (default options)")

	return inmem.NewState(), nil
}
