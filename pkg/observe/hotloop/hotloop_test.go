package hotloop_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/observe/hotloop"
	"github.com/resgraph/resgraph/pkg/observe/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// stream builds a synthetic trace in virtual time, the way a Runtime
// records it: a commit by a controller names the change that caused the
// reconcile it was made in.
type stream struct {
	now      time.Time
	versions map[string]uint64
	events   []trace.Record
}

func newStream() *stream { return &stream{now: t0, versions: map[string]uint64{}} }

func ref(typ, id string) trace.Ref { return trace.Ref{Namespace: "ns", Type: typ, ID: id} }

// write records that writer ("" for a user: no commit event) committed a
// new version of r in a reconcile caused by cause (zero: none), and
// returns the version written, to be used as a cause.
func (s *stream) write(writer string, r trace.Ref, cause trace.Ref) trace.Ref {
	key := r.Type + "/" + r.ID
	s.versions[key]++
	r.Version = s.versions[key]
	if writer != "" {
		s.events = append(s.events, trace.Record{Time: s.now, Type: trace.Commit, Controller: writer, Op: "update", Resource: r, Cause: cause})
	}
	// The route to readers: ignored by the detector, as are other types.
	s.events = append(s.events, trace.Record{Time: s.now, Type: trace.Route, Controller: "anyone", Resource: r})
	return r
}

func (s *stream) advance(d time.Duration) { s.now = s.now.Add(d) }

// run feeds every event and returns the reports with the time of the
// event that produced them.
type report struct {
	at time.Time
	f  hotloop.Finding
}

func run(d *hotloop.Detector, evs []trace.Record) []report {
	var out []report
	for i := range evs {
		for _, f := range d.Observe(&evs[i]) {
			out = append(out, report{evs[i].Time, f})
		}
	}
	return out
}

// TestFlappingPairIsFlaggedWithin2s: A writes X because of B's change of
// Y, B writes Y because of A's change of X, 20 times a second each, from
// t0: flagged as one loop naming both controllers, both resources and the
// cycle, within 2 s.
func TestFlappingPairIsFlaggedWithin2s(t *testing.T) {
	s := newStream()
	s.advance(123 * time.Millisecond) // not aligned with a window
	start := s.now
	y := s.write("", ref("Y", "y"), trace.Ref{}) // a user starts it
	for range 100 {                              // 5 s
		x := s.write("A", ref("X", "x"), y)
		s.advance(25 * time.Millisecond)
		y = s.write("B", ref("Y", "y"), x)
		s.advance(25 * time.Millisecond)
	}
	d := hotloop.New(hotloop.Config{})
	reports := run(d, s.events)
	require.Len(t, reports, 1, "flagged once, not per window")
	r := reports[0]
	assert.False(t, r.f.Ended)
	assert.LessOrEqual(t, r.at.Sub(start), 2*time.Second, "flagged within 2 s")
	assert.Equal(t, "A writes X(ns/x) → B writes Y(ns/y) → A", r.f.String())
	assert.Equal(t, []string{"A", "B"}, r.f.Controllers())
	assert.InDelta(t, 20, r.f.Rate, 2.01, "about 20 commits/s per step")
	require.Len(t, d.Active(), 1)
	assert.Equal(t, "A → B", d.Active()[0].Key())

	// It stops: the loop ends once it has been absent for ClearAfter.
	stopped := s.now
	ended := d.Tick(stopped.Add(hotloop.DefaultClearAfter - time.Second))
	assert.Empty(t, ended, "not yet")
	ended = d.Tick(stopped.Add(hotloop.DefaultClearAfter + time.Second))
	require.Len(t, ended, 1)
	assert.True(t, ended[0].Ended)
	assert.Equal(t, "A → B", ended[0].Key())
	assert.Empty(t, d.Active())
}

func TestSelfLoopIsFlagged(t *testing.T) {
	s := newStream()
	x := s.write("", ref("X", "x"), trace.Ref{})
	for range 60 {
		x = s.write("C", ref("X", "x"), x)
		s.advance(40 * time.Millisecond)
	}
	d := hotloop.New(hotloop.Config{})
	reports := run(d, s.events)
	require.Len(t, reports, 1)
	assert.Equal(t, "C writes X(ns/x) → C", reports[0].f.String())
}

func TestThreeControllerCycle(t *testing.T) {
	s := newStream()
	x := s.write("", ref("X", "1"), trace.Ref{})
	for range 100 {
		y := s.write("B", ref("Y", "1"), x)
		z := s.write("C", ref("Z", "1"), y)
		x = s.write("A", ref("X", "1"), z)
		s.advance(30 * time.Millisecond)
	}
	reports := run(hotloop.New(hotloop.Config{}), s.events)
	require.Len(t, reports, 1)
	assert.Equal(t, "A writes X(ns/1) → B writes Y(ns/1) → C writes Z(ns/1) → A", reports[0].f.String(), "starts with the smallest name")
}

// TestCauseCommittedOnceIsKnown: the writer of a cause is found among the
// resources committed only once (kept in a lighter form than those
// committed more): A creates a new X each round and rewrites Z, B rewrites
// Y because of each new X, A because of Y — a loop through Y and Z whose
// edge into B is caused by resources each committed once.
func TestCauseCommittedOnceIsKnown(t *testing.T) {
	s := newStream()
	y := s.write("", ref("Y", "y"), trace.Ref{})
	for i := range 100 {
		x := s.write("A", ref("X", fmt.Sprint(i)), y)
		s.write("A", ref("Z", "z"), y)
		s.advance(25 * time.Millisecond)
		y = s.write("B", ref("Y", "y"), x)
		s.advance(25 * time.Millisecond)
	}
	reports := run(hotloop.New(hotloop.Config{}), s.events)
	require.Len(t, reports, 1)
	assert.Equal(t, "A → B", reports[0].f.Key())
	assert.Equal(t, "A writes Z(ns/z) → B writes Y(ns/y) → A", reports[0].f.String())
}

// TestCauseWithTheWriterNeedsNoEarlierCommit: a Runtime that knows the
// writer of a cause may set it; the detector need not have seen that
// commit (it may be older than the window, or the ring lost it).
func TestCauseWithTheWriterNeedsNoEarlierCommit(t *testing.T) {
	var evs []trace.Record
	now := t0
	for i := range 100 {
		v := uint64(i + 1)
		evs = append(evs,
			trace.Record{Time: now, Type: trace.Commit, Controller: "B", Resource: trace.Ref{Namespace: "ns", Type: "Y", ID: "y", Version: v},
				Cause: trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: v, Writer: "A"}},
			trace.Record{Time: now, Type: trace.Commit, Controller: "A", Resource: trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: v},
				Cause: trace.Ref{Namespace: "ns", Type: "Y", ID: "y", Version: v, Writer: "B"}})
		now = now.Add(30 * time.Millisecond)
	}
	reports := run(hotloop.New(hotloop.Config{}), evs)
	require.Len(t, reports, 1)
	assert.Equal(t, "A → B", reports[0].f.Key())
}

// TestShortBurstIsNotSustained: a loop present in one window only (a
// burst that settles) is not flagged.
func TestShortBurstIsNotSustained(t *testing.T) {
	s := newStream()
	s.now = t0.Add(10 * time.Millisecond)
	y := s.write("", ref("Y", "y"), trace.Ref{})
	for range 10 { // 0.4 s at 25/s: one window at most
		x := s.write("A", ref("X", "x"), y)
		y = s.write("B", ref("Y", "y"), x)
		s.advance(20 * time.Millisecond)
	}
	s.advance(10 * time.Second)
	s.write("A", ref("Z", "z"), trace.Ref{})
	assert.Empty(t, run(hotloop.New(hotloop.Config{}), s.events))
}

// TestSlowLoopIsBelowTheRate: a loop that goes round twice a second (a
// carrier that flaps, a periodic resync) is not hot.
func TestSlowLoopIsBelowTheRate(t *testing.T) {
	s := newStream()
	y := s.write("", ref("Y", "y"), trace.Ref{})
	for range 40 {
		x := s.write("A", ref("X", "x"), y)
		s.advance(250 * time.Millisecond)
		y = s.write("B", ref("Y", "y"), x)
		s.advance(250 * time.Millisecond)
	}
	assert.Empty(t, run(hotloop.New(hotloop.Config{}), s.events))
	// A lower rate threshold flags it.
	reports := run(hotloop.New(hotloop.Config{MinRate: 1, Window: time.Second}), s.events)
	require.Len(t, reports, 1)
	assert.Equal(t, "A → B", reports[0].f.Key())
}

// TestG1LikeChainsAreNotFlagged feeds randomized chains like rule G1's: a
// user changes inputs at random, fast, and transforms A→B→C→D propagate
// each change, each adding a finalizer to each of its inputs once (a
// write to its own input that wakes it again, for a reconcile that writes
// nothing new). Nothing closes a cycle: no finding, whatever the seed.
func TestG1LikeChainsAreNotFlagged(t *testing.T) {
	chain := []string{"A", "B", "C", "D"}
	types := []string{"TA", "TB", "TC", "TD", "TE"}
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			s := newStream()
			finalized := map[string]bool{}
			for range 3000 {
				id := fmt.Sprint(rng.IntN(5)) // few IDs: each rewritten often
				cause := s.write("", ref(types[0], id), trace.Ref{})
				for i, c := range chain {
					if key := c + id; !finalized[key] {
						finalized[key] = true
						s.write(c, ref(types[i], id), cause) // its finalizer on its input
					}
					cause = s.write(c, ref(types[i+1], id), cause)
				}
				s.advance(time.Duration(rng.IntN(4000)) * time.Microsecond) // ~500 changes/s
			}
			d := hotloop.New(hotloop.Config{})
			assert.Empty(t, run(d, s.events))
			assert.Empty(t, d.Active())
		})
	}
}

// TestStatusWriterIsNotALoop: C answers every external change of its
// input X with a write of its own to X (a status), 50 times a second; its
// own write wakes it again and it writes nothing then.
func TestStatusWriterIsNotALoop(t *testing.T) {
	s := newStream()
	for range 250 {
		x := s.write("", ref("X", "x"), trace.Ref{})
		s.write("C", ref("X", "x"), x)
		s.advance(20 * time.Millisecond)
	}
	assert.Empty(t, run(hotloop.New(hotloop.Config{}), s.events))
}

// TestMostlyOtherCausesIsNotALoop: A and B rewrite each other's inputs at
// a high rate, but each writes its output mostly because of external
// changes: no edge is "mostly", no loop.
func TestMostlyOtherCausesIsNotALoop(t *testing.T) {
	s := newStream()
	var x, y trace.Ref
	for i := range 500 {
		ext := s.write("", ref("E", "e"), trace.Ref{})
		if i%4 == 0 && !y.IsZero() {
			x = s.write("A", ref("X", "x"), y)
		} else {
			x = s.write("A", ref("X", "x"), ext)
		}
		if i%4 == 0 {
			y = s.write("B", ref("Y", "y"), x)
		} else {
			y = s.write("B", ref("Y", "y"), ext)
		}
		s.advance(10 * time.Millisecond)
	}
	assert.Empty(t, run(hotloop.New(hotloop.Config{}), s.events))
}

// TestFastMirrorIsNotALoop: an observer mirrors a fast external source into
// a status that another controller turns into an address, which the
// observer reads too (and writes nothing for): fast, but no cycle of
// causes.
func TestFastMirrorIsNotALoop(t *testing.T) {
	s := newStream()
	for range 1000 {
		k := s.write("", ref("Kernel", "eth0"), trace.Ref{})
		st := s.write("Observer", ref("Status", "eth0"), k)
		s.write("Addr", ref("Address", "eth0"), st)
		s.advance(5 * time.Millisecond)
	}
	assert.Empty(t, run(hotloop.New(hotloop.Config{}), s.events))
}

func TestConfigDefaults(t *testing.T) {
	c := hotloop.New(hotloop.Config{MinShare: 1}).Config()
	assert.Equal(t, hotloop.Config{Window: hotloop.DefaultWindow, MinRate: hotloop.DefaultMinRate, MinShare: hotloop.DefaultMinShare,
		Sustain: hotloop.DefaultSustain, ClearAfter: hotloop.DefaultClearAfter}, c)
	custom := hotloop.Config{Window: time.Second, MinRate: 3, MinShare: 0.9, Sustain: 4, ClearAfter: time.Minute}
	assert.Equal(t, custom, hotloop.New(custom).Config())
}

// TestCommitsOfUnknownVersionAreLeftOut: finalizer changes and teardowns
// (no version known) may have changed nothing; they never make a loop,
// but they move time on.
func TestCommitsOfUnknownVersionAreLeftOut(t *testing.T) {
	var evs []trace.Record
	now := t0
	x := trace.Ref{Namespace: "ns", Type: "X", ID: "x", Writer: "C"}
	for range 100 {
		evs = append(evs, trace.Record{Time: now, Type: trace.Commit, Controller: "C", Op: "addFinalizer",
			Resource: trace.Ref{Namespace: "ns", Type: "X", ID: "x"}, Cause: x})
		now = now.Add(20 * time.Millisecond)
	}
	d := hotloop.New(hotloop.Config{})
	assert.Empty(t, run(d, evs))
	evs[99].Resource.Version = 1
	assert.Empty(t, run(hotloop.New(hotloop.Config{}), evs[:99]))
	// Time moves on with any event: a later route closes the windows.
	late := trace.Record{Time: now.Add(time.Hour), Type: trace.Route}
	assert.Empty(t, d.Observe(&late))
}

func TestLongQuietStretchIsCheap(t *testing.T) {
	d := hotloop.New(hotloop.Config{})
	e := trace.Record{Time: t0, Type: trace.Commit, Controller: "A", Resource: trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: 1}}
	d.Observe(&e)
	assert.Empty(t, d.Tick(t0.Add(1000*time.Hour)), "empty windows are skipped, not iterated")
}

// TestBurstLeavesNoMemoryBehind: what the detector keeps of a burst of
// commits of many resources is bounded during the burst (its table of
// resources committed once) and goes once the burst is over — the table
// goes back to its starting size.
func TestBurstLeavesNoMemoryBehind(t *testing.T) {
	const burst = 100_000
	evs := make([]trace.Record, burst)
	for i := range evs {
		evs[i] = trace.Record{Time: t0, Type: trace.Commit, Controller: "B", Op: "create",
			Resource: trace.Ref{Namespace: "ns", Type: "B", ID: fmt.Sprintf("b%06d", i), Version: 1},
			Cause:    trace.Ref{Namespace: "ns", Type: "A", ID: fmt.Sprintf("a%06d", i), Version: 1}}
	}
	before := liveHeap()
	d := hotloop.New(hotloop.Config{})
	assert.Empty(t, run(d, evs))
	during := liveHeap()
	late := trace.Record{Time: t0.Add(time.Minute), Type: trace.Route}
	assert.Empty(t, d.Observe(&late))
	after := liveHeap()
	runtime.KeepAlive(d)
	runtime.KeepAlive(evs)
	t.Logf("detector heap: %d KiB during the burst, %d KiB after", (during-before)/1024, (after-before)/1024)
	// An entry of a resource committed once holds no names and no ID: its
	// key is a hash of its kind and ID, its controllers are indexes (a
	// 44-byte table entry; 96 B per resource with the names, 70 with the
	// ID), in a table of bounded size.
	assert.Less(t, during-before, int64(maxTable), "what the resources committed once cost during the burst")
	assert.Less(t, after-before, int64(64<<10), "and let go once it is over")
}

// maxTable is the most the detector's table of resources committed once
// or twice may take: 16,384 entries of 44 bytes, and slack.
const maxTable = 16384*44 + 64<<10

// oneShots returns n commits by B, of n resources each committed once,
// every caused by A's change, spread over windows windows from t0.
func oneShots(n, windows int) []trace.Record {
	evs := make([]trace.Record, n)
	for i := range evs {
		at := t0.Add(time.Duration(i*windows) * hotloop.DefaultWindow / time.Duration(n))
		evs[i] = trace.Record{Time: at, Type: trace.Commit, Controller: "B", Op: "create",
			Resource: trace.Ref{Namespace: "ns", Type: "B", ID: fmt.Sprintf("b%07d", i), Version: 1},
			Cause:    trace.Ref{Namespace: "ns", Type: "A", ID: fmt.Sprintf("a%07d", i), Version: 1}}
	}
	return evs
}

// TestAStreamOfOneShotCommitsKeepsMemoryBounded: whatever the number of
// resources committed once each — in one window, or over several — what
// the detector keeps of them is bounded (its table), the same for 50k
// resources as for 400k; the commits it let go of before their time are
// counted, and the windows they were let go in count as incomplete.
func TestAStreamOfOneShotCommitsKeepsMemoryBounded(t *testing.T) {
	for _, c := range []struct{ n, windows int }{{50_000, 1}, {200_000, 1}, {200_000, 8}} {
		evs := oneShots(c.n, c.windows)
		before := liveHeap()
		d := hotloop.New(hotloop.Config{})
		assert.Empty(t, run(d, evs))
		kept := liveHeap() - before
		runtime.KeepAlive(evs)
		d.Tick(t0.Add(time.Hour)) // the last window closes
		st := d.Stats()
		t.Logf("%d one-shot commits over %d windows: %d KiB kept, %+v", c.n, c.windows, kept/1024, st)
		assert.Less(t, kept, int64(maxTable), "%d resources over %d windows", c.n, c.windows)
		assert.Positive(t, st.Dropped, "the table could not hold them all: counted")
		assert.Positive(t, st.Incomplete, "and the windows it dropped them in are incomplete")
		assert.Zero(t, st.Missed)
	}
}

// TestALoopIsFlaggedAmidMoreOneShotCommitsThanTheTableHolds: a
// resource rewritten by its own controller, and a loop whose edge into B
// is caused by resources each committed once (as in
// TestCauseCommittedOnceIsKnown), are flagged while every round brings
// thousands of other resources committed once — more over two windows
// than the detector's table holds: a full table lets go of the commits
// of the oldest window first.
func TestALoopIsFlaggedAmidMoreOneShotCommitsThanTheTableHolds(t *testing.T) {
	s := newStream()
	x := s.write("", ref("X", "x"), trace.Ref{})
	y := s.write("", ref("Y", "y"), trace.Ref{})
	n := 0
	for i := range 30 { // 1.5 s at 20 rounds/s, 60k one-shot commits a window
		w := s.write("A", ref("W", fmt.Sprint(i)), y)
		for range 6000 {
			s.write("Other", ref("O", fmt.Sprint(n)), trace.Ref{})
			n++
		}
		x = s.write("C", ref("X", "x"), x)
		y = s.write("B", ref("Y", "y"), w)
		s.write("A", ref("Z", "z"), y)
		s.advance(50 * time.Millisecond)
	}
	d := hotloop.New(hotloop.Config{})
	run(d, s.events)
	t.Logf("%+v", d.Stats())
	require.Positive(t, d.Stats().Dropped, "the table was full")
	active := d.Active()
	require.Len(t, active, 2)
	assert.Equal(t, "A writes Z(ns/z) → B writes Y(ns/y) → A", active[0].String())
	assert.Equal(t, "C writes X(ns/x) → C", active[1].String())
}

// loopRounds feeds d rounds rounds of a self-loop of C on X from s, 25
// a second, each commit's cause naming its writer (see
// TestCauseWithTheWriterNeedsNoEarlierCommit), of which d reads only the
// first keep commits of every period:
// the others were missed, which d is told before the next it reads when
// tell is set. It returns the loops flagged or ended and the last version
// of X.
func loopRounds(s *stream, d *hotloop.Detector, x trace.Ref, rounds, keep, period int, tell bool) ([]hotloop.Finding, trace.Ref) {
	var out []hotloop.Finding
	missed := uint64(0)
	for i := range rounds {
		s.events = s.events[:0]
		x = s.write("C", ref("X", "x"), x)
		x.Writer = "C" // as the cause of the next: known if missed
		s.advance(40 * time.Millisecond)
		if i%period >= keep {
			missed += uint64(len(s.events))
			continue
		}
		if tell {
			d.Missed(missed)
		}
		missed = 0
		for i := range s.events {
			out = append(out, d.Observe(&s.events[i])...)
		}
	}
	return out, x
}

// TestAWindowThatMissedRecordsNeitherEndsALoopNorLowersItsRate: a flagged
// self-loop at 25 commits/s goes on while the detector is fed only half of
// its commits, then only every tenth for longer than ClearAfter — told
// where it missed the others: it keeps its rate, and it is not ended. Not
// told, the same stream lowers its rate, then ends it. Once complete
// windows without it follow, it ends.
func TestAWindowThatMissedRecordsNeitherEndsALoopNorLowersItsRate(t *testing.T) {
	for _, told := range []bool{true, false} {
		d := hotloop.New(hotloop.Config{})
		s := newStream()
		x := s.write("", ref("X", "x"), trace.Ref{})
		reports, x := loopRounds(s, d, x, 75, 1, 1, false) // 3 s, every commit read
		require.Len(t, reports, 1)
		assert.Empty(t, d.Tick(s.now)) // its last window closes
		rate := d.Active()[0].Rate
		half, x := loopRounds(s, d, x, 76, 1, 2, told) // 3 s, half read: still hot
		assert.Empty(t, half)
		require.Len(t, d.Active(), 1)
		if told {
			assert.Equal(t, rate, d.Active()[0].Rate, "told: the rate is not lowered")
		} else {
			assert.Less(t, d.Active()[0].Rate, rate*3/4, "not told: the rate seems to drop")
		}
		missed, _ := loopRounds(s, d, x, 250, 1, 10, told) // 10 s, a tenth read
		if !told {
			require.Len(t, missed, 1, "not told: the loop seems to stop")
			assert.True(t, missed[0].Ended)
			continue
		}
		assert.Empty(t, missed, "told: not ended")
		require.Len(t, d.Active(), 1)
		assert.Equal(t, rate, d.Active()[0].Rate, "its rate is that of the windows that counted every commit")
		assert.Equal(t, uint64(2*37+2*9*24), d.Stats().Missed, "a commit and its route, 1 round in 2, then 9 in 10 (told before the next read)")
		ended := d.Tick(s.now.Add(hotloop.DefaultClearAfter + time.Second))
		require.Len(t, ended, 1, "complete windows without it end it")
		assert.True(t, ended[0].Ended)
	}
}

// liveHeap returns the bytes of the heap still reachable after a
// collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkObserve is the detector's cost per event on a W3-like stream:
// every resource committed once by each stage of a chain.
func BenchmarkObserve(b *testing.B) {
	s := newStream()
	for i := range 10000 {
		c := s.write("", ref("A", fmt.Sprint(i)), trace.Ref{})
		c = s.write("TA", ref("B", fmt.Sprint(i)), c)
		s.write("TB", ref("C", fmt.Sprint(i)), c)
	}
	var evs []trace.Record
	for _, e := range s.events {
		if e.Type == trace.Commit {
			evs = append(evs, e)
		}
	}
	d := hotloop.New(hotloop.Config{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e := evs[i%len(evs)]
		e.Time = t0.Add(time.Duration(i) * time.Microsecond)
		d.Observe(&e)
		i++
	}
}

// BenchmarkObserveChain is the detector's cost per record on W3's stream
// as the Runtime feeds it: a chain of four controllers, each committing
// every one of 10k resources once on their creation and once on their
// update, in passes of 100 resources, each commit caused by the previous
// stage's (whose writer the cause names), 10 µs apart.
func BenchmarkObserveChain(b *testing.B) {
	const n, pass = 10_000, 100
	types := []string{"A", "B", "C", "D", "E"}
	names := []string{"AtoB", "BtoC", "CtoD", "DtoE"}
	var evs []trace.Record
	for v := uint64(1); v <= 2; v++ {
		for first := 0; first < n; first += pass {
			for stage, name := range names {
				for i := first; i < first+pass; i++ {
					id := fmt.Sprintf("r%05d", i)
					cause := trace.Ref{Namespace: "ns", Type: types[stage], ID: id, Version: v}
					if stage > 0 {
						cause.Writer = names[stage-1]
					}
					r := trace.Ref{Namespace: "ns", Type: types[stage+1], ID: id, Version: v}
					evs = append(evs, trace.Record{Type: trace.Commit, Controller: name, Op: "update", Resource: r, Cause: cause})
				}
			}
		}
	}
	d := hotloop.New(hotloop.Config{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e := &evs[i%len(evs)]
		e.Time = t0.Add(time.Duration(i) * 10 * time.Microsecond)
		d.Observe(e)
		i++
	}
}

// commitsOf returns the commits of n resources by B, each committed
// times times in one window, caused by A's changes.
func commitsOf(n int, times uint64) []trace.Record {
	var evs []trace.Record
	for v := uint64(1); v <= times; v++ {
		for i := range n {
			evs = append(evs, trace.Record{Time: t0, Type: trace.Commit, Controller: "B", Op: "update",
				Resource: trace.Ref{Namespace: "ns", Type: "B", ID: fmt.Sprintf("b%05d", i), Version: v},
				Cause:    trace.Ref{Namespace: "ns", Type: "A", ID: fmt.Sprintf("a%05d", i), Version: v, Writer: "A"}})
		}
	}
	return evs
}

// allocsOf returns the allocations of a new detector fed evs.
func allocsOf(t *testing.T, evs []trace.Record) uint64 {
	d := hotloop.New(hotloop.Config{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	assert.Empty(t, run(d, evs))
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestAThirdCommitAllocatesOnlyItsStat: a resource committed a third
// time in its windows gets a stat (its second commit is a compact entry,
// see TestASecondCommitIsACompactEntry), whose counts of the common case
// (one controller, one writer) need no allocation of their own — one
// allocation per resource, besides the maps' growth.
func TestAThirdCommitAllocatesOnlyItsStat(t *testing.T) {
	const n = 10_000
	allocs := allocsOf(t, commitsOf(n, 3))
	t.Logf("%d allocations for %d resources committed three times", allocs, n)
	assert.Less(t, allocs, uint64(n*3/2), "one allocation per resource committed a third time (its stat), and the maps' growth")
}

// chainOutputs returns the commits of n outputs of a controller chain's
// hop AtoB, as a chain makes them: AtoB creates each (because of an A
// written outside the Runtime), the next hop BtoC adds its finalizer
// (because of AtoB's creation), and AtoB updates it (because of an
// update of its A): the third commit of each (round 3) is counted by
// writer and reader in three counts.
func chainOutputs(n int, round int) []trace.Record {
	evs := make([]trace.Record, 0, n)
	for i := range n {
		b := trace.Ref{Namespace: "ns", Type: "B", ID: fmt.Sprintf("b%05d", i), Version: uint64(round)}
		a := trace.Ref{Namespace: "ns", Type: "A", ID: fmt.Sprintf("a%05d", i), Version: uint64(round)}
		switch round {
		case 1, 3:
			evs = append(evs, trace.Record{Time: t0, Type: trace.Commit, Controller: "AtoB", Op: "modify", Resource: b, Cause: a})
		case 2:
			cause := b
			cause.Version, cause.Writer = 1, "AtoB"
			evs = append(evs, trace.Record{Time: t0, Type: trace.Commit, Controller: "BtoC", Op: "addFinalizer", Resource: b, Cause: cause})
		}
	}
	return evs
}

// TestAChainOutputsThirdCommitAllocatesOnlyItsStat: the third commit of a
// chain's output — created by one controller, given its finalizer by the
// next, updated by the first — makes a stat whose counts (three: by each
// controller, and by the second because of the first's change) need no
// allocation of their own, and which holds no controller name: one
// allocation per resource, at most 320 bytes with the maps' growth (a
// stat of names and two own counts took 256 bytes and 160 more for its
// counts).
func TestAChainOutputsThirdCommitAllocatesOnlyItsStat(t *testing.T) {
	const n = 2000 // below the bound of stats (maxStats)
	d := hotloop.New(hotloop.Config{})
	assert.Empty(t, run(d, chainOutputs(n, 1)))
	assert.Empty(t, run(d, chainOutputs(n, 2)))
	third := chainOutputs(n, 3)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	assert.Empty(t, run(d, third))
	runtime.ReadMemStats(&after)
	allocs, bytes := after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc
	t.Logf("%d resources' third commits: %d allocations, %d bytes", n, allocs, bytes)
	assert.Less(t, allocs, uint64(n*5/4), "one allocation per resource (its stat), and the maps' growth")
	assert.Less(t, bytes, uint64(n*320), "a stat of at most 192 bytes per resource, and the maps' growth")
	assert.Zero(t, d.Stats().Dropped, "every resource got its stat")
}

// TestASecondCommitIsACompactEntry: while the threshold is above two, a
// resource committed twice in the last two windows is a map entry of its
// two commits, not a stat: 10k resources committed twice allocate only the
// growth of the detector's maps (a stat each before).
func TestASecondCommitIsACompactEntry(t *testing.T) {
	const n = 10_000
	evs := commitsOf(n, 2)
	before := liveHeap()
	d := hotloop.New(hotloop.Config{})
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	assert.Empty(t, run(d, evs))
	runtime.ReadMemStats(&m1)
	retained := liveHeap() - before
	runtime.KeepAlive(d)
	runtime.KeepAlive(evs)
	allocs := m1.Mallocs - m0.Mallocs
	t.Logf("%d resources committed twice: %d allocations, %d KiB retained", n, allocs, retained/1024)
	assert.Less(t, allocs, uint64(n/10), "no allocation per resource: the maps' growth only")
}

// TestASecondCommitCountsWhenTheThresholdIsTwo: with a threshold of two
// triggers a window (MinRate 4/s, 500 ms windows), a resource's second
// commit may make an edge hot, so it is counted at once: A commits each
// new X twice because of B's Y, B rewrites Y because of A's X — a loop
// whose edge into A holds only through X's second commits.
func TestASecondCommitCountsWhenTheThresholdIsTwo(t *testing.T) {
	s := newStream()
	y := s.write("", ref("Y", "y"), trace.Ref{})
	for i := range 30 {
		s.write("A", ref("X", fmt.Sprint(i)), y)
		x := s.write("A", ref("X", fmt.Sprint(i)), y)
		y = s.write("B", ref("Y", "y"), x)
		s.advance(100 * time.Millisecond)
	}
	reports := run(hotloop.New(hotloop.Config{MinRate: 4}), s.events)
	require.Len(t, reports, 1)
	assert.Equal(t, "A → B", reports[0].f.Key())
}

// TestCauseCommittedTwiceIsKnown: the writer of a change is known when the
// resource changed was committed twice (either version): A commits each new X twice and rewrites Z, B rewrites Y
// because of the first version of the X in even rounds, of its second in
// odd ones, A rewrites Z because of Y — a loop through Y and Z, whose edge
// into B holds only if both versions' writer is found.
func TestCauseCommittedTwiceIsKnown(t *testing.T) {
	s := newStream()
	y := s.write("", ref("Y", "y"), trace.Ref{})
	for i := range 100 {
		x1 := s.write("A", ref("X", fmt.Sprint(i)), y)
		x2 := s.write("A", ref("X", fmt.Sprint(i)), y)
		s.write("A", ref("Z", "z"), y)
		s.advance(25 * time.Millisecond)
		cause := x1
		if i%2 == 1 {
			cause = x2
		}
		y = s.write("B", ref("Y", "y"), cause)
		s.advance(25 * time.Millisecond)
	}
	reports := run(hotloop.New(hotloop.Config{}), s.events)
	require.Len(t, reports, 1)
	assert.Equal(t, "A → B", reports[0].f.Key())
}

// TestAWindowThatMissedRecordsKeepsALoopsStreak: a self-loop seen in a
// window, then in a window of which the detector read one commit only,
// told it missed the rest, then seen again: the window that missed
// records breaks off no streak, so the loop is flagged at the end of its
// second window seen (Sustain 2). Not told, the streak starts again.
func TestAWindowThatMissedRecordsKeepsALoopsStreak(t *testing.T) {
	for _, told := range []bool{true, false} {
		d := hotloop.New(hotloop.Config{})
		v := uint64(0)
		commit := func(at time.Duration) []hotloop.Finding {
			v++
			return d.Observe(&trace.Record{Time: t0.Add(at), Type: trace.Commit, Controller: "C",
				Resource: trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: v},
				Cause:    trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: v - 1}})
		}
		for i := range 12 { // the window [0, 0.5 s): hot
			assert.Empty(t, commit(time.Duration(i)*40*time.Millisecond))
		}
		assert.Empty(t, commit(520*time.Millisecond)) // [0.5 s, 1 s): one read of 12
		if told {
			d.Missed(11)
		}
		v += 11
		for i := range 12 { // [1 s, 1.5 s): hot
			assert.Empty(t, commit(time.Second+time.Duration(i)*40*time.Millisecond))
		}
		flagged := commit(1500 * time.Millisecond)
		if !told {
			assert.Empty(t, flagged, "not told: one window seen since the gap")
			continue
		}
		require.Len(t, flagged, 1, "told: flagged at the end of its second window seen")
		assert.Equal(t, "C writes X(ns/x) → C", flagged[0].String())
	}
}
