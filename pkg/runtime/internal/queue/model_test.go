package queue

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/internal/retry"
)

// checkInvariants verifies the invariants written on Queue's fields. It is
// meant for a quiescent queue (no Get blocked).
func (q *Queue[K, N]) checkInvariants() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	free := map[int32]bool{}
	for _, i := range q.free {
		if free[i] || !reflect.ValueOf(q.slab[i]).IsZero() {
			return fmt.Errorf("free slot %d listed twice or not zero", i)
		}
		free[i] = true
	}
	if q.index.n+len(free) != len(q.slab) {
		return fmt.Errorf("%d keys + %d free != %d slots", q.index.n, len(free), len(q.slab))
	}
	if err := q.checkIndex(); err != nil {
		return err
	}
	counts := map[location]int{}
	for _, s := range q.index.slots {
		if s == 0 {
			continue
		}
		i := s - 1
		e := q.slab[i]
		k := e.key
		if e.key != k {
			return fmt.Errorf("index[%v] -> slot with key %v", k, e.key)
		}
		counts[e.loc]++
		if e.dirty && e.loc != locInFlight {
			return fmt.Errorf("key %v dirty but not in flight", k)
		}
		if (e.loc == locDelayed) != (e.heapIdx >= 0) || (e.loc == locDelayed && q.delayed[e.heapIdx] != i) {
			return fmt.Errorf("key %v: heapIdx %d inconsistent with location %d", k, e.heapIdx, e.loc)
		}
	}
	for k := range q.held {
		if _, known := q.find(k); known {
			return fmt.Errorf("parked key %v is also known", k)
		}
	}
	seen := map[int32]bool{}
	for j := range q.due.n {
		i := q.due.buf[(q.due.head+j)&(len(q.due.buf)-1)]
		if seen[i] || q.slab[i].loc != locDue {
			return fmt.Errorf("due ring slot %d repeated or not due", i)
		}
		seen[i] = true
	}
	for h := 1; h < len(q.delayed); h++ {
		if q.heapLess(q.delayed[h], q.delayed[(h-1)/2]) {
			return fmt.Errorf("heap order broken at %d", h)
		}
	}
	if counts[locDue] != q.due.len() || counts[locDelayed] != len(q.delayed) || counts[locInFlight] != q.inFlight {
		return fmt.Errorf("location counts %v vs due %d, delayed %d, in flight %d",
			counts, q.due.len(), len(q.delayed), q.inFlight)
	}
	if len(q.parked) != 0 || q.transit != 0 || q.timekeeper != nil {
		return fmt.Errorf("quiescent queue has %d parked, %d in transit, timekeeper %v",
			len(q.parked), q.transit, q.timekeeper != nil)
	}
	return nil
}

// modelKey is a key's state in the reference model.
type modelKey struct {
	loc      location
	dueAt    time.Duration // locDelayed
	seq      int           // locDelayed
	failures uint32
	attempts uint32
	dirty    bool
	failing  bool
	// note is what the key's note must hold: 1 per add since it was last
	// taken, 100 per Complete that kept it.
	note int
}

// model is a naive reference implementation of the queue's rules, in
// virtual time measured from the test's start.
type model struct {
	opts retry.Policy
	keys map[string]*modelKey
	due  []string
	seq  int
	// parked are the keys parked by Policy.MaxAttempts (all failing).
	parked map[string]bool
}

// promote moves delayed keys due at or before now to the back of due, in
// (dueAt, seq) order.
func (m *model) promote(now time.Duration) {
	var ready []string
	for k, s := range m.keys {
		if s.loc == locDelayed && s.dueAt <= now {
			ready = append(ready, k)
		}
	}
	slices.SortFunc(ready, func(a, b string) int {
		return cmp.Or(cmp.Compare(m.keys[a].dueAt, m.keys[b].dueAt), cmp.Compare(m.keys[a].seq, m.keys[b].seq))
	})
	for _, k := range ready {
		m.keys[k].loc = locDue
		m.due = append(m.due, k)
	}
}

func (m *model) add(k string) {
	s, ok := m.keys[k]
	if ok && m.opts.ChangeAbandonsRetry && s.loc != locInFlight {
		s.failures, s.attempts = 0, 0
	}
	if ok {
		s.note++
	}
	switch {
	case !ok:
		m.keys[k] = &modelKey{loc: locDue, failing: m.parked[k], note: 1}
		delete(m.parked, k)
		m.due = append(m.due, k)
	case s.loc == locInFlight:
		s.dirty = true
	case s.loc == locDelayed:
		s.loc = locDue
		m.due = append(m.due, k)
	}
}

// next predicts Get at now: the key and how long Get blocks; ok is false if
// nothing will ever be due.
func (m *model) next(now time.Duration) (k string, wait time.Duration, ok bool) {
	if len(m.due) > 0 {
		return m.due[0], 0, true
	}
	first := ""
	for key, s := range m.keys {
		if s.loc == locDelayed && (first == "" || s.dueAt < m.keys[first].dueAt ||
			s.dueAt == m.keys[first].dueAt && s.seq < m.keys[first].seq) {
			first = key
		}
	}
	if first == "" {
		return "", 0, false
	}
	return first, m.keys[first].dueAt - now, true
}

// take takes k and returns its note.
func (m *model) take(k string) (note int) {
	if m.due[0] != k {
		panic("model: take of a key not at the front")
	}
	m.due = m.due[1:]
	m.keys[k].loc = locInFlight
	note, m.keys[k].note = m.keys[k].note, 0
	return note
}

// done completes k with r and returns its attempts.
func (m *model) done(k string, r Result, now time.Duration) (attempts uint32) {
	s := m.keys[k]
	defer func() {
		if m.keys[k] != nil {
			s.note += 100 // kept: settled
		}
	}()
	switch r.run {
	case retry.Succeeded:
		s.failures = 0
	case retry.Failed:
		s.failures++
	}
	s.failing = r.failed()
	exhausted := false
	if r.failed() {
		s.attempts++
		exhausted = m.opts.MaxAttempts > 0 && s.attempts >= m.opts.MaxAttempts
	} else {
		s.attempts = 0
	}
	attempts = s.attempts
	delayed := func(d time.Duration) {
		s.loc, s.dueAt, s.seq = locDelayed, now+d, m.seq
		m.seq++
	}
	switch {
	case s.dirty:
		s.dirty = false
		if exhausted || m.opts.ChangeAbandonsRetry {
			s.failures, s.attempts = 0, 0
		}
		s.loc = locDue
		m.due = append(m.due, k)
	case exhausted:
		delete(m.keys, k)
		m.parked[k] = true
	case r.run == retry.Succeeded:
		delete(m.keys, k)
	case r.run == retry.Failed:
		delayed(m.opts.Backoff.Delay(s.failures))
	case r.after <= 0:
		s.loc = locDue
		m.due = append(m.due, k)
	default:
		delayed(r.after)
	}
	return attempts
}

func (m *model) counts() (waiting, inFlight, failing int) {
	failing = len(m.parked)
	for _, s := range m.keys {
		if s.failing {
			failing++
		}
		if s.loc == locInFlight {
			inFlight++
		} else {
			waiting++
		}
	}
	return waiting, inFlight, failing
}

// TestModel_RandomOperationsMatchReference drives the queue with random
// operations in virtual time and checks every Get (key and exact wait),
// Len, InFlight, Failing, the parked keys and the internal invariants
// against a reference model, with the default options and with each retry
// policy option (MaxAttempts, ChangeAbandonsRetry) and both.
func TestModel_RandomOperationsMatchReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, policy := range []retry.Policy{{}, {MaxAttempts: 2}, {ChangeAbandonsRetry: true}, {MaxAttempts: 3, ChangeAbandonsRetry: true}} {
		t.Run(fmt.Sprintf("MaxAttempts=%d,ChangeAbandonsRetry=%v", policy.MaxAttempts, policy.ChangeAbandonsRetry), func(t *testing.T) {
			modelRuns(t, seed, policy)
		})
	}
}

func modelRuns(t *testing.T, seed uint64, policy retry.Policy) {
	for run := range 8 {
		synctest.Test(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(run)))
			opts := policy
			opts.Backoff = retry.Backoff{Initial: 10 * time.Millisecond, Max: 80 * time.Millisecond}
			q := New[string, int](opts)
			m := &model{opts: opts, keys: map[string]*modelKey{}, parked: map[string]bool{}}
			start := time.Now()
			now := func() time.Duration { return time.Since(start) }
			key := func() string { return fmt.Sprintf("k%d", rng.IntN(6)) }
			var inFlight []string
			slots := map[string]Slot{} // the slots of the keys in flight

			for step := range 1500 {
				var op string
				switch n := rng.IntN(100); {
				case n < 25:
					k := key()
					op = "add " + k
					m.promote(now())
					m.add(k)
					q.AddNoted(k, func(n *int) { *n++ })
				case n < 30:
					ks := []string{key(), key(), key()}
					op = fmt.Sprint("addBatch ", ks)
					m.promote(now())
					for _, k := range ks {
						m.add(k)
					}
					q.AddBatchNoted(ks, func(i int, n *int) {
						require.Equal(t, ks[i], q.slab[q.mustFind(ks[i])].key, "note %d of %v", i, ks)
						*n++
					})
				case n < 60:
					m.promote(now())
					want, wait, ok := m.next(now())
					timeout := wait + time.Millisecond
					if !ok {
						timeout = time.Millisecond
					} else if wait > 0 && rng.IntN(3) == 0 {
						ok, timeout = false, wait/2 // give up before it is due
					}
					op = fmt.Sprintf("get (timeout %v; want %q after %v, %v)", timeout, want, wait, ok)
					ctx, cancel := context.WithTimeout(t.Context(), timeout)
					before := now()
					k, note, slot, got := q.GetNoted(ctx)
					cancel()
					require.Equal(t, ok, got, "step %d: %s", step, op)
					if ok {
						require.Equal(t, want, k, "step %d: %s", step, op)
						require.Equal(t, wait, now()-before, "step %d: %s", step, op)
						m.promote(now())
						require.Equal(t, m.take(k), note, "step %d: %s: note", step, op)
						inFlight = append(inFlight, k)
						slots[k] = slot
					} else {
						require.Equal(t, timeout, now()-before, "step %d: %s", step, op)
					}
				case n < 90:
					if len(inFlight) == 0 {
						continue
					}
					j := rng.IntN(len(inFlight))
					k := inFlight[j]
					inFlight = slices.Delete(inFlight, j, j+1)
					r := []Result{
						Success(), Success(), Failure(), Failure(), RequeueAfter(0),
						RequeueAfter(time.Duration(rng.IntN(50)) * time.Millisecond),
						RequeueAfterFailure(time.Duration(rng.IntN(50)) * time.Millisecond),
					}[rng.IntN(7)]
					op = fmt.Sprintf("done %s %v", k, r)
					m.promote(now())
					attempts := m.done(k, r, now())
					slot := slots[k] // completed by its slot, or else looked up
					delete(slots, k)
					if rng.IntN(2) == 0 {
						slot = Slot{}
					}
					c := q.CompleteNoted(k, slot, r, func(n *int, c Completion) {
						require.False(t, c.Parked)
						*n += 100
					})
					require.Equal(t, m.parked[k], c.Parked, "step %d: %s: parked", step, op)
					require.Equal(t, attempts, c.Attempts, "step %d: %s: attempts", step, op)
				default:
					d := time.Duration(rng.IntN(60)) * time.Millisecond
					op = fmt.Sprintf("sleep %v", d)
					time.Sleep(d)
				}
				waiting, flying, failing := m.counts()
				require.Equal(t, waiting, q.Len(), "step %d: %s: Len", step, op)
				require.Equal(t, flying, q.InFlight(), "step %d: %s: InFlight", step, op)
				require.Equal(t, failing, q.Failing(), "step %d: %s: Failing", step, op)
				_, parked := q.Parked(0)
				require.Equal(t, len(m.parked), parked, "step %d: %s: Parked", step, op)
				require.NoError(t, q.checkInvariants(), "step %d: %s", step, op)
			}
		})
	}
}
