package runtime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/observe/hotloop"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
)

// TestTrace_TheDetectorIsToldWhereTheReaderMissedRecords: records the
// trace's reader missed (overwritten first) are counted in TraceMissed
// and told to the hot-loop detector where they were, so that the windows
// they fell in, and only those, count as incomplete — with and without a
// hook (the two ways the reader reads).
func TestTrace_TheDetectorIsToldWhereTheReaderMissedRecords(t *testing.T) {
	for _, withHook := range []bool{false, true} {
		t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		ring := trace.NewRing(8)
		o := tracePoller{ring: ring, logger: zap.NewNop(), loops: &loopState{}, sinks: func() []*telemetry.Controller { return nil },
			det: hotloop.New(hotloop.Config{Window: time.Second}), causes: map[string]trace.Ref{}}
		if withHook {
			o.hook = func([]trace.Record) {}
		}
		commit := func(at time.Time, v uint64) {
			ring.Add(&trace.Record{Time: at, Type: trace.Commit, Controller: "C", Resource: trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: v}})
		}
		for v := range uint64(5) {
			commit(t0, v+1)
		}
		o.poll(t0)
		assert.Zero(t, o.det.Stats().Missed, "hook %v: nothing missed yet", withHook)
		// 20 records in the window two after t0's, in a ring of 8: 12 are
		// overwritten before the next read.
		for v := range uint64(20) {
			commit(t0.Add(2*time.Second), v+6)
		}
		o.poll(t0.Add(2 * time.Second))
		o.poll(t0.Add(time.Hour))
		assert.Equal(t, uint64(12), o.loops.missed.Load(), "hook %v", withHook)
		assert.Equal(t, hotloop.Stats{Missed: 12, Incomplete: 3}, o.det.Stats(),
			"hook %v: t0's window, the one after and the window of the next record read count as incomplete", withHook)
	}
}
