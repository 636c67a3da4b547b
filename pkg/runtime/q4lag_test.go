package runtime_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// laggingState is a test State whose kind watches of one type stop
// delivering while held (the watcher lags), and on release deliver what
// they held as a coalesced backlog, as the state contract lets any
// backend coalesce one: one event per resource with its newest state —
// Created for a resource the watcher had not seen, Updated with the
// version it last saw as Old, Destroyed with it as Old, nothing for one
// it never saw that is gone.
type laggingState struct {
	forwardingState
	typ resource.Type

	mu      sync.Mutex
	held    bool
	release chan struct{} // closed by Release; protected by mu
}

func newLaggingState(typ resource.Type) *laggingState {
	return &laggingState{forwardingState: forwardingState{inmem.NewState()}, typ: typ}
}

// Hold makes the watches of the type deliver nothing until Release.
func (l *laggingState) Hold() {
	l.mu.Lock()
	l.held, l.release = true, make(chan struct{})
	l.mu.Unlock()
}

// Release delivers what the watches held, coalesced.
func (l *laggingState) Release() {
	l.mu.Lock()
	l.held = false
	close(l.release)
	l.mu.Unlock()
}

// holding returns the channel Release closes while held, nil otherwise.
func (l *laggingState) holding() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return nil
	}
	return l.release
}

func (l *laggingState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if k.Type() != l.typ {
		return l.State.WatchKindAggregated(ctx, k, ch, opts...)
	}
	inner := make(chan []state.Event, 1)
	if err := l.State.WatchKindAggregated(ctx, k, inner, opts...); err != nil {
		return err
	}
	go l.forward(ctx, inner, ch) // owned by the watch: ends with ctx
	return nil
}

// forward passes the batches of inner on to ch, holding them while held.
func (l *laggingState) forward(ctx context.Context, inner <-chan []state.Event, ch chan<- []state.Event) {
	seen := map[resource.ID]resource.Resource{}
	var backlog []state.Event
	for {
		var b []state.Event
		release := l.holding()
		if release == nil && backlog != nil {
			b, backlog = coalesce(seen, backlog), nil
		} else {
			select {
			case b = <-inner:
			case <-release:
				continue
			case <-ctx.Done():
				return
			}
			if l.holding() != nil {
				backlog = append(backlog, b...)
				continue
			}
		}
		for _, ev := range b {
			switch ev.Type {
			case state.Created, state.Updated:
				seen[ev.Resource.Metadata().ID()] = ev.Resource
			case state.Destroyed:
				delete(seen, ev.Resource.Metadata().ID())
			}
		}
		select {
		case ch <- b:
		case <-ctx.Done():
			return
		}
	}
}

// coalesce folds backlog into one event per resource (see laggingState),
// in the order of the changes they end with; seen is what the watcher saw.
func coalesce(seen map[resource.ID]resource.Resource, backlog []state.Event) []state.Event {
	last := map[resource.ID]int{}
	for i, ev := range backlog {
		last[ev.Resource.Metadata().ID()] = i
	}
	var out []state.Event
	for i, ev := range backlog {
		id := ev.Resource.Metadata().ID()
		if last[id] != i {
			continue
		}
		old, wasSeen := seen[id]
		switch {
		case ev.Type == state.Destroyed && !wasSeen:
			continue
		case ev.Type == state.Destroyed:
			ev.Old = old
		case wasSeen:
			ev.Type, ev.Old = state.Updated, old
		default:
			ev.Type, ev.Old = state.Created, nil
		}
		out = append(out, ev)
	}
	return out
}

// counter is a QController over primary As with mapped Bs labelled with
// the A they belong to ("parent"): its Reconcile counts an A's Bs, read
// from the state (the Bs are not cached), and records the count.
type counter struct {
	mu     sync.Mutex
	counts map[resource.ID]int
}

func (c *counter) controller() *funcQController {
	return &funcQController{
		name:     "counter",
		settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeB, controller.InputQMapped)}},
		reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			l, err := r.List(ctx, kind(typeB), state.WithLabelQuery(resource.LabelEqual("parent", p.ID())))
			if err != nil {
				return err
			}
			c.mu.Lock()
			if c.counts == nil {
				c.counts = map[resource.ID]int{}
			}
			c.counts[p.ID()] = len(l.Items)
			c.mu.Unlock()
			return nil
		},
		mapInput: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
			var out []resource.Pointer
			add := func(md *resource.Metadata) {
				if parent, ok := md.Labels().Get("parent"); ok {
					out = append(out, ptr(typeA, parent))
				}
			}
			if prev, ok := controller.PreviousOf(p); ok {
				add(prev.Metadata())
			}
			if gone, ok := controller.AsDestroyed(p); ok {
				add(gone.Metadata())
				return out, nil
			}
			res, err := r.Get(ctx, p, state.WithReadOnlyGet())
			if state.IsNotFoundError(err) {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			add(res.Metadata())
			return out, nil
		},
	}
}

func (c *counter) of(id resource.ID) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.counts[id]
	return n, ok
}

// TestQ4Extended_RelabelBehindRouting (rule Q4, extended): a Reconcile
// reads a mapped input the Runtime has not routed yet (its kind watch
// lags); the input is then relabelled, and the lagging watch delivers
// both changes coalesced into one Created with the new label. The old
// owner is requeued all the same: the read waited until routing had seen
// the version it read, so the relabel reaches MapInput with it as the
// previous version.
func TestQ4Extended_RelabelBehindRouting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := newLaggingState(typeB)
		var c counter
		e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(c.controller()))
		mustCreate(t, st, newPair(typeA, "a1", 0))
		mustCreate(t, st, newPair(typeA, "a2", 0))
		synctest.Wait()

		st.Hold()
		mustCreate(t, st, childOf("b1", "a1"))
		// a1 is reconciled while routing has not seen b1.
		_, err := st.ModifyWithResult(ctx, newPair(typeA, "a1", 0), func(r resource.Resource) error {
			r.(*Pair).TypedSpec().A = 1
			return nil
		})
		require.NoError(t, err)
		synctest.Wait()
		n1, _ := c.of("a1")
		require.Equal(t, 0, n1, "a1's read of b1 waits until routing has seen b1")
		_, err = st.ModifyWithResult(ctx, childOf("b1", ""), func(r resource.Resource) error {
			r.Metadata().Labels().Set("parent", "a2")
			return nil
		})
		require.NoError(t, err)
		synctest.Wait()
		st.Release()
		runtimetest.Settle(t, e.Runtime)

		n1, _ = c.of("a1")
		n2, _ := c.of("a2")
		assert.Equal(t, 0, n1, "a1, which b1 left, was requeued and counts nothing")
		assert.Equal(t, 1, n2, "a2 counts b1")
	})
}

// TestQ4Extended_ReadAheadOfAStuckWatchIsBounded: a read of a mapped
// input waits for routing at most 5 seconds in all; a watch that does not
// catch up in time (held here) leaves the read as it was taken.
func TestQ4Extended_ReadAheadOfAStuckWatchIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newLaggingState(typeB)
		var c counter
		e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(c.controller()))
		st.Hold()
		mustCreate(t, st, childOf("b1", "a1"))
		mustCreate(t, st, newPair(typeA, "a1", 0))
		synctest.Wait()
		_, ok := c.of("a1")
		require.False(t, ok, "a1's read waits for routing")

		time.Sleep(5*time.Second - time.Nanosecond)
		synctest.Wait()
		_, ok = c.of("a1")
		require.False(t, ok, "still within the bound")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		n, _ := c.of("a1")
		assert.Equal(t, 1, n, "past the bound, the read returns what it read")

		st.Release()
		runtimetest.Settle(t, e.Runtime)
	})
}
