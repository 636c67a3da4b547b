package runtimetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// NewState returns an inmem state for the test tb (opts are inmem's
// options) whose mutation detector (rule S7; on in test binaries unless
// RESGRAPH_MUTATION_DETECTOR=0) reports to tb instead of panicking: a
// shared snapshot found changed in place fails tb with the detector's
// report, which names the controllers it was handed to, and stops tb at
// its next wait of this package (or the one in progress), which fails at
// once with that report instead of timing out. The test binary goes on
// with its other tests. [Start] runs over such a state unless [WithState]
// gives one; a test that builds its state first (to fill it before the
// Runtime starts) makes it with NewState to keep that behaviour.
func NewState(tb testing.TB, opts ...inmem.Option) state.State {
	return inmem.NewState(append([]inmem.Option{inmem.WithMutationReport(reportTo(tb))}, opts...)...)
}

// stopped is the cause of the waits of a test stopped by a report.
type stopped struct{ report error }

func (s *stopped) Error() string {
	return "stopped by the mutation detector's report: " + s.report.Error()
}

func (s *stopped) Unwrap() error { return s.report }

// stops are the contexts of the tests' waits by test name: canceled with
// a *stopped cause when a report fails the test. A subtest's derives from
// its parent test's, so that a report in the parent stops it too.
var stops = struct {
	sync.Mutex
	byTest map[string]*stop
}{byTest: map[string]*stop{}}

type stop struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	ended  atomic.Bool // the test ended: reports go nowhere
}

// stopOf returns the stop of tb, made on first use (removed when tb ends).
func stopOf(tb testing.TB) *stop {
	name := tb.Name()
	stops.Lock()
	defer stops.Unlock()
	if s := stops.byTest[name]; s != nil {
		return s
	}
	parent := context.Background()
	if p := nearestStopLocked(name); p != nil {
		parent = p.ctx
	}
	ctx, cancel := context.WithCancelCause(parent)
	s := &stop{ctx: ctx, cancel: cancel}
	stops.byTest[name] = s
	tb.Cleanup(func() {
		s.ended.Store(true)
		cancel(nil)
		stops.Lock()
		delete(stops.byTest, name)
		stops.Unlock()
	})
	return s
}

// nearestStopLocked returns the stop of the test name or of its nearest
// parent test that has one; nil when none has. The caller holds stops.
func nearestStopLocked(name string) *stop {
	for {
		if s := stops.byTest[name]; s != nil {
			return s
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return nil
		}
		name = name[:i]
	}
}

// waitContext is the parent context of a wait of the test tb: canceled
// when a report stops tb (see [NewState]).
func waitContext(tb testing.TB) context.Context {
	stops.Lock()
	defer stops.Unlock()
	if s := nearestStopLocked(tb.Name()); s != nil {
		return s.ctx
	}
	return context.Background()
}

// stopCause returns the error that stopped a wait whose context is ctx
// (a report, see [NewState]); nil when ctx ended otherwise (its timeout).
func stopCause(ctx context.Context) error {
	var s *stopped
	if errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}

// reportTo returns the mutation report of tb's state: it fails tb with the
// report and stops tb's waits. A report after tb ended goes nowhere.
func reportTo(tb testing.TB) func(error) {
	s := stopOf(tb)
	return func(err error) {
		if err == nil || s.ended.Load() {
			return
		}
		tb.Errorf("runtimetest: %v", err)
		s.cancel(&stopped{report: err})
	}
}
