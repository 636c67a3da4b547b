package workloads

import (
	"context"
	"testing"
	"time"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/cosi/res"
)

// TestWatchLastSeesChangesMadeRightAfterItReturns: as on resgraph's side,
// watchLast registers its watch before it returns, so the resources of
// kind E created right after it (before follow runs) all reach the
// tracker.
func TestWatchLastSeesChangesMadeRightAfterItReturns(t *testing.T) {
	const n = 50 // within the state's default history (100 events per kind)

	st := NewState(runner.Options{}, &runner.Report{Metrics: map[string]float64{}, Config: map[string]string{}})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	tracker := measure.NewChainTracker(n, params.Hops)

	var rewatches int

	follow, err := watchLast(ctx, st, tracker, &rewatches)
	if err != nil {
		t.Fatal(err)
	}

	for i := range n {
		if err := st.Create(ctx, res.NewE(i, params.Hops)); err != nil {
			t.Fatal(err)
		}
	}

	done := make(chan error, 1)

	go func() { done <- follow() }()

	// The deadline only bounds a failure: with the watch registered in
	// time, every event is already on its way.
	select {
	case <-tracker.Reached[0]:
	case <-time.After(30 * time.Second):
		t.Error("the tracker never saw every E resource: a change made right after watchLast returned was missed")
	}

	cancel()

	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
