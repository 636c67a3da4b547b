package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/observe/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func ev(i int) *trace.Record {
	return &trace.Record{Type: trace.Commit, Time: t0.Add(time.Duration(i)), Controller: "C", Resource: trace.Ref{Namespace: "ns", Type: "T", ID: "x", Version: uint64(i)}}
}

func seqs(recs []trace.Record) []uint64 {
	out := []uint64{}
	for _, e := range recs {
		out = append(out, e.Seq)
	}
	return out
}

func TestRingKeepsTheNewestEventsInOrder(t *testing.T) {
	r := trace.NewRing(4)
	assert.Equal(t, 4, r.Size())
	assert.Empty(t, r.Snapshot())
	for i := 1; i <= 3; i++ {
		assert.Equal(t, uint64(i), r.Add(ev(i)))
	}
	assert.Equal(t, []uint64{1, 2, 3}, seqs(r.Snapshot()))
	for i := 4; i <= 10; i++ {
		r.Add(ev(i))
	}
	snap := r.Snapshot()
	assert.Equal(t, []uint64{7, 8, 9, 10}, seqs(snap))
	assert.Equal(t, uint64(7), snap[0].Resource.Version, "the record is stored as given")
	assert.Equal(t, uint64(10), r.Last())

	recs, lost := r.Since(2, nil)
	assert.Equal(t, []uint64{7, 8, 9, 10}, seqs(recs))
	assert.Equal(t, uint64(4), lost, "3..6 were overwritten")
	recs, lost = r.Since(8, nil)
	assert.Equal(t, []uint64{9, 10}, seqs(recs))
	assert.Zero(t, lost)
	recs, lost = r.Since(10, nil)
	assert.Empty(t, recs)
	assert.Zero(t, lost)
}

// TestRingOfAnySize: a ring whose size is not a power of two (its slot is
// found by a division, not a mask) keeps its newest records in order too.
func TestRingOfAnySize(t *testing.T) {
	for _, size := range []int{1, 3, 5, 6} {
		r := trace.NewRing(size)
		for i := 1; i <= 2*size+1; i++ {
			r.Add(ev(i))
		}
		r.Put(&trace.Head{}, func(e *trace.Record) { *e = *ev(2*size + 2) })
		want := []uint64{}
		for seq := size + 3; seq <= 2*size+2; seq++ {
			want = append(want, uint64(seq))
		}
		snap := r.Snapshot()
		assert.Equal(t, want, seqs(snap), "size %d", size)
		for _, e := range snap {
			assert.Equal(t, e.Seq, e.Resource.Version, "size %d: record %d in its slot", size, e.Seq)
		}
	}
}

// TestVisitSeesWhatSinceReturns: Visit calls its function with the records
// Since would copy, in order, and reports the last one and the lost ones.
func TestVisitSeesWhatSinceReturns(t *testing.T) {
	r := trace.NewRing(4)
	for i := 1; i <= 10; i++ {
		r.Add(ev(i))
	}
	for _, after := range []uint64{0, 2, 8, 10} {
		want, wantLost := r.Since(after, nil)
		var got []trace.Record
		last, lost := r.Visit(after, func(e *trace.Record) { got = append(got, *e) })
		assert.Equal(t, seqs(want), seqs(got), "after %d", after)
		assert.Equal(t, wantLost, lost, "after %d", after)
		assert.Equal(t, max(after, 10), last, "after %d: the last record visited", after)
	}
	var nilRing *trace.Ring
	last, lost := nilRing.Visit(3, func(*trace.Record) { t.Fatal("a nil ring has no record") })
	assert.Equal(t, uint64(3), last)
	assert.Zero(t, lost)
}

func TestSizeZeroIsOff(t *testing.T) {
	for _, size := range []int{0, -1} {
		r := trace.NewRing(size)
		assert.Nil(t, r)
		assert.Zero(t, r.Add(ev(1)), "Add on a disabled trace does nothing")
		assert.Empty(t, r.Snapshot())
		assert.Zero(t, r.Size())
		assert.Zero(t, r.Last())
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := r.Follow(false).Next(ctx, nil)
		assert.ErrorIs(t, err, context.Canceled)
	}
}

func TestAddDoesNotAllocate(t *testing.T) {
	r := trace.NewRing(16)
	e := ev(1)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { r.Add(e) }))
}

// TestPutStoresTheEventItFills: Put stores the record made of its head and
// what its function writes into the rest, zeroed (nothing of the record it
// overwrites survives, whichever fields that one set), numbered like Add's,
// without allocating; on a disabled trace it does nothing.
func TestPutStoresTheEventItFills(t *testing.T) {
	r := trace.NewRing(2)
	cause := trace.Ref{Namespace: "ns", Type: "T", ID: "cause", Version: 4, Writer: "W"}
	old := trace.Record{Type: trace.Backoff, Time: t0, Outcome: trace.OutcomeError, Attempt: 3, Causes: 2, Worker: 1,
		Controller: "old", Op: "old", Resource: trace.Ref{ID: "old", Version: 9, Writer: "old"}, Cause: cause,
		Due: t0.Add(time.Second), Duration: time.Second, Error: "old", Detail: "old"}
	r.Add(&old)
	r.Add(ev(2))
	want := *ev(3)
	want.Duration, want.Worker = time.Millisecond, 2
	h := trace.Head{Type: want.Type, Time: want.Time, Worker: want.Worker, Controller: want.Controller, Op: want.Op, Resource: want.Resource, Duration: want.Duration}
	// headOnly is the record numbered seq that h makes alone.
	headOnly := func(seq uint64) trace.Record {
		return trace.Record{Seq: seq, Type: h.Type, Time: h.Time, Worker: h.Worker, Controller: h.Controller, Op: h.Op, Resource: h.Resource, Duration: h.Duration}
	}
	assert.Equal(t, uint64(3), r.Put(&h, func(e *trace.Record) {
		got := *e
		got.Seq = 0 // Put sets it after fill
		assert.Equal(t, headOnly(0), got,
			"the head set, the rest zero")
		e.Cause, e.Seq = cause, 99
	}))
	snap := r.Snapshot()
	require.Len(t, snap, 2)
	want.Seq, want.Cause = 3, cause
	assert.Equal(t, want, snap[1], "the record filled, with Put's sequence number")

	// Every field of the record overwritten is gone, with or without a fill.
	r.Add(&old)
	r.Add(ev(5))
	assert.Equal(t, uint64(6), r.Put(&h, nil))
	snap = r.Snapshot()
	require.Len(t, snap, 2)
	assert.Equal(t, headOnly(6), snap[1])

	// Nor of one that Put stored with a fill, whatever the next one's.
	setRest := func(e *trace.Record) { e.Cause, e.Due, e.Error, e.Detail = old.Cause, old.Due, old.Error, old.Detail }
	r.Put(&h, setRest)
	r.Add(ev(8))
	assert.Equal(t, uint64(9), r.Put(&h, nil))
	snap = r.Snapshot()
	require.Len(t, snap, 2)
	assert.Equal(t, headOnly(9), snap[1],
		"over a record put with a fill")
	r.Put(&h, nil)
	r.Put(&h, func(e *trace.Record) {
		got := *e
		got.Seq = 0
		assert.Equal(t, headOnly(0), got,
			"over a record put without a fill")
	})

	fill := func(e *trace.Record) { e.Error = "E" }
	assert.Zero(t, testing.AllocsPerRun(1000, func() { r.Put(&h, fill) }))

	var off *trace.Ring
	assert.Zero(t, off.Put(&h, func(*trace.Record) { t.Fatal("fill called on a disabled trace") }))
}

// TestConcurrentWritersAndReaders runs writers that wrap the ring many
// times while readers take snapshots: every snapshot is in increasing
// sequence order without duplicates, and at the end the ring holds
// exactly the newest records.
func TestConcurrentWritersAndReaders(t *testing.T) {
	r := trace.NewRing(64)
	const writers, each = 4, 3000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r.Add(&trace.Record{Type: trace.Route, Controller: "w", Attempt: uint32(w), Causes: uint32(i)})
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := seqs(r.Snapshot())
				for i := 1; i < len(s); i++ {
					if s[i] <= s[i-1] {
						t.Errorf("snapshot out of order: %v", s)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	s := seqs(r.Snapshot())
	require.Len(t, s, 64)
	assert.Equal(t, uint64(writers*each), s[63])
	assert.Equal(t, uint64(writers*each-63), s[0])
}

func TestFollowerReadsEveryEventInOrder(t *testing.T) {
	// The ring holds every record written, so the follower loses none
	// however the goroutines are scheduled.
	r := trace.NewRing(128)
	r.Add(ev(1)) // before Follow: not followed
	f := r.Follow(false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	done := make(chan []trace.Record)
	go func() {
		var got, buf []trace.Record
		for len(got) < 100 {
			var err error
			if buf, err = f.Next(ctx, buf[:0]); err != nil {
				break
			}
			got = append(got, buf...)
		}
		done <- got
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				r.Add(ev(2 + w*25 + i))
			}
		})
	}
	wg.Wait()
	got := <-done
	want := make([]uint64, 0, 100)
	for i := uint64(2); i <= 101; i++ {
		want = append(want, i)
	}
	assert.Equal(t, want, seqs(got))
}

func TestFollowerIsToldWhatItLost(t *testing.T) {
	r := trace.NewRing(4)
	f := r.Follow(false)
	for i := 1; i <= 10; i++ {
		r.Add(ev(i))
	}
	recs, err := f.Next(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, recs, 5)
	assert.Equal(t, trace.Lost, recs[0].Type)
	assert.Equal(t, uint32(6), recs[0].Attempt, "records 1..6 were overwritten")
	assert.Equal(t, uint64(6), recs[0].Seq)
	assert.Equal(t, []uint64{7, 8, 9, 10}, seqs(recs[1:]))

	fromOldest := r.Follow(true)
	recs, err = fromOldest.Next(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, trace.Lost, recs[0].Type)
	assert.Equal(t, []uint64{7, 8, 9, 10}, seqs(recs[1:]))
}

func TestFollowerWaitsForTheNextEventAndHonoursItsContext(t *testing.T) {
	r := trace.NewRing(4)
	f := r.Follow(false)
	got := make(chan []trace.Record)
	go func() {
		recs, _ := f.Next(context.Background(), nil)
		got <- recs
	}()
	r.Add(ev(1))
	recs := <-got
	require.Len(t, recs, 1)
	assert.Equal(t, uint64(1), recs[0].Seq)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := f.Next(ctx, nil)
		errc <- err
	}()
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
}

func TestJSONLinesRoundTrip(t *testing.T) {
	recs := []trace.Record{
		{Seq: 1, Time: t0, Type: trace.Commit, Controller: "A", Op: "update", Resource: trace.Ref{Namespace: "ns", Type: "T", ID: "x", Version: 2, Writer: "A"}, Worker: 2},
		{Seq: 2, Time: t0, Type: trace.ReconcileStart, Controller: "B<", Op: "reconcile", Resource: trace.Ref{Namespace: "ns", Type: "U", ID: "x"},
			Cause: trace.Ref{Namespace: "ns", Type: "T", ID: "x", Version: 2, Writer: "A"}, Causes: 3, Duration: time.Millisecond},
		{Seq: 3, Time: t0, Type: trace.ReconcileEnd, Controller: "B<", Outcome: trace.OutcomeError, Error: "boom \"quoted\"\nline", Duration: 5 * time.Millisecond},
		{Seq: 4, Time: t0, Type: trace.Backoff, Controller: "B<", Due: t0.Add(time.Second), Attempt: 2, Error: "boom"},
		{Seq: 5, Type: trace.Lost, Attempt: 7},
	}
	var buf bytes.Buffer
	require.NoError(t, trace.WriteJSONLines(&buf, recs))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, len(recs))
	assert.JSONEq(t, `{"seq":1,"time":"2025-03-04T05:06:07Z","type":"commit","controller":"A","op":"update","resource":{"namespace":"ns","type":"T","id":"x","version":2,"writer":"A"},"worker":2}`, lines[0])
	assert.Contains(t, lines[1], `"controller":"B<"`, "no HTML escaping in JSON lines")
	assert.JSONEq(t, `{"seq":5,"type":"lost","attempt":7}`, lines[4], "zero fields are left out")
	back, err := trace.ReadJSONLines(strings.NewReader(buf.String() + "\n"))
	require.NoError(t, err)
	assert.Equal(t, recs, back)

	_, err = trace.ReadJSONLines(strings.NewReader(lines[0] + "\n{\"type\":\"nope\"}\n"))
	assert.ErrorContains(t, err, "line 2")
	assert.ErrorContains(t, err, `unknown record type "nope"`)
	var e trace.Record
	assert.Error(t, json.Unmarshal([]byte(`{"type":"commit","outcome":"meh"}`), &e))
}

func TestTypeAndOutcomeNames(t *testing.T) {
	for typ := trace.Commit; typ <= trace.Lost; typ++ {
		back, err := trace.ParseType(typ.String())
		require.NoError(t, err)
		assert.Equal(t, typ, back)
	}
	assert.Equal(t, "Type(99)", trace.Type(99).String())
	for _, o := range trace.Outcomes {
		back, err := trace.ParseOutcome(o.String())
		require.NoError(t, err)
		assert.Equal(t, o, back)
	}
	assert.Equal(t, "Outcome(9)", trace.Outcome(9).String())
}

func TestEventString(t *testing.T) {
	e := trace.Record{Seq: 7, Time: t0, Type: trace.ReconcileStart, Controller: "B", Op: "reconcile",
		Resource: trace.Ref{Namespace: "ns", Type: "U", ID: "x"},
		Cause:    trace.Ref{Namespace: "ns", Type: "T", ID: "x", Version: 2, Writer: "A"}, Causes: 2, Worker: 2, Duration: time.Millisecond, Error: "a\nb"}
	assert.Equal(t, `#7 05:06:07.000000 reconcileStart controller=B op=reconcile resource=U(ns/x) cause=T(ns/x)@2 by A causes=2 worker=2 duration=1ms error="a\nb"`, e.String())
}

func TestFilter(t *testing.T) {
	x := trace.Ref{Namespace: "ns", Type: "T", ID: "x"}
	recs := []trace.Record{
		{Seq: 1, Type: trace.Commit, Controller: "A", Resource: trace.Ref{Namespace: "ns", Type: "T", ID: "x", Version: 3}},
		{Seq: 2, Type: trace.ReconcileStart, Controller: "B", Resource: trace.Ref{Namespace: "ns", Type: "U", ID: "x"}, Cause: trace.Ref{Namespace: "ns", Type: "T", ID: "x", Version: 3}},
		{Seq: 3, Type: trace.Commit, Controller: "B", Resource: trace.Ref{Namespace: "ns", Type: "U", ID: "x"}},
	}
	all := trace.Filter{}
	assert.Equal(t, []uint64{1, 2, 3}, seqs(all.Select(recs)))
	byRes := trace.Filter{Resource: x}
	assert.Equal(t, []uint64{1, 2}, seqs(byRes.Select(recs)), "about x, or caused by a change of x")
	byCtrl := trace.Filter{Controller: "B", Types: []trace.Type{trace.Commit}}
	assert.Equal(t, []uint64{3}, seqs(byCtrl.Select(recs)))
}

// BenchmarkAdd is the cost of recording one record, from one goroutine and
// from every P at once.
func BenchmarkAdd(b *testing.B) {
	e := &trace.Record{Type: trace.Route, Controller: "controller", Op: "updated", Time: t0,
		Resource: trace.Ref{Namespace: "ns", Type: "T", ID: "id-123", Version: 7, Writer: "w"}, Duration: time.Microsecond}
	b.Run("serial", func(b *testing.B) {
		r := trace.NewRing(trace.DefaultSize)
		b.ReportAllocs()
		for b.Loop() {
			r.Add(e)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		r := trace.NewRing(trace.DefaultSize)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r.Add(e)
			}
		})
	})
	b.Run("followed", func(b *testing.B) {
		r := trace.NewRing(trace.DefaultSize)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			f := r.Follow(false)
			var buf []trace.Record
			for {
				var err error
				if buf, err = f.Next(ctx, buf[:0]); err != nil {
					return
				}
			}
		})
		b.ReportAllocs()
		for b.Loop() {
			r.Add(e)
		}
		cancel()
		wg.Wait()
	})
}

// BenchmarkPut is the cost of recording one record in place as the
// Runtime's most frequent ones are (a route: the head and a duration),
// alone and while the collector runs without pause (its write barriers
// are then on, as they are for a part of a busy Runtime's time).
func BenchmarkPut(b *testing.B) {
	h := trace.Head{Type: trace.Route, Controller: "controller", Op: "updated", Time: t0,
		Resource: trace.Ref{Namespace: "ns", Type: "T", ID: "id-123", Version: 7, Writer: "w"}, Duration: time.Microsecond}
	var fill func(*trace.Record)
	b.Run("serial", func(b *testing.B) {
		r := trace.NewRing(trace.DefaultSize)
		b.ReportAllocs()
		for b.Loop() {
			r.Put(&h, fill)
		}
	})
	b.Run("collecting", func(b *testing.B) {
		r := trace.NewRing(trace.DefaultSize)
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { // owned: stopped by done before the benchmark returns
			for {
				select {
				case <-done:
					return
				default:
					runtime.GC()
				}
			}
		})
		b.ReportAllocs()
		for b.Loop() {
			r.Put(&h, fill)
		}
		close(done)
		wg.Wait()
	})
}

// ready reports whether c has a value, taking it.
func ready(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestRingWakesItsReaderWhenHalfFull: the record that makes half the ring
// written since the reader's mark sends one wake-up (kept until taken);
// a mark that half the ring was already written past reports it, since
// that record's wake-up may have come before the mark.
func TestRingWakesItsReaderWhenHalfFull(t *testing.T) {
	r := trace.NewRing(8)
	add := func(n int) {
		for range n {
			r.Put(&trace.Head{Type: trace.Commit}, nil)
		}
	}
	add(3)
	assert.False(t, ready(r.HalfFull()), "3 of 8 written")
	add(1)
	assert.True(t, ready(r.HalfFull()), "4 of 8 written")
	add(4)
	assert.False(t, ready(r.HalfFull()), "one wake-up per mark")
	assert.True(t, r.MarkRead(2), "6 written since 2")
	assert.False(t, r.MarkRead(8), "none written since 8")
	add(3)
	assert.False(t, ready(r.HalfFull()))
	r.Add(&trace.Record{Type: trace.Commit})
	assert.True(t, ready(r.HalfFull()), "Add wakes as Put does")

	var nilRing *trace.Ring
	assert.Nil(t, nilRing.HalfFull())
	assert.False(t, nilRing.MarkRead(1))
}
