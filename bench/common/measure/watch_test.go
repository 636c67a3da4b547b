package measure

import (
	"testing"
	"time"

	"github.com/resgraph/resgraph/bench/common/params"
)

func TestFinalTrackerEveryEvent(t *testing.T) {
	tr := NewFinalTracker(3, 1)

	for i := range 3 {
		tr.Observe(params.Spec{Value: 0, Index: i})
	}

	if tr.Done() {
		t.Fatal("done before any final state")
	}

	for i := range 3 {
		tr.Observe(params.Spec{Value: 1, Index: i})
	}

	if !tr.Done() || tr.Events != 6 {
		t.Fatalf("done=%v events=%d, want true 6", tr.Done(), tr.Events)
	}
}

func TestFinalTrackerCoalesced(t *testing.T) {
	// A coalescing library may deliver only the newest state of a resource,
	// and may repeat one: neither may confuse the count.
	tr := NewFinalTracker(2, 1)
	tr.Observe(params.Spec{Value: 1, Index: 0})
	tr.Observe(params.Spec{Value: 1, Index: 0})
	tr.Observe(params.Spec{Value: 1, Index: 7}) // out of range: ignored

	if tr.Done() {
		t.Fatal("done with one resource missing")
	}

	tr.Observe(params.Spec{Value: 1, Index: 1})

	if !tr.Done() {
		t.Fatal("not done after both final states")
	}
}

func TestFinalSeq(t *testing.T) {
	p := params.W2Params{Resources: 3, Updates: 7}
	got := p.FinalSeq()
	want := []int{6, 4, 5}

	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("FinalSeq = %v, want %v", got, want)
		}
	}

	if got := (params.W2Params{Resources: 3, Updates: 2}).FinalSeq(); got[2] != -1 || got[1] != 1 {
		t.Fatalf("FinalSeq with fewer updates than resources = %v", got)
	}
}

func TestFanOutCoalesced(t *testing.T) {
	p := params.W2Params{Subscribers: 2, Resources: 2, Updates: 6}
	f := NewFanOut(p)

	for seq := range p.Updates {
		f.Call(seq)
		f.Returned(seq)
	}

	// subscriber 0 gets everything, subscriber 1 only the newest state of each resource
	s0, s1 := f.Sub(0), f.Sub(1)
	done0 := false

	for seq := range p.Updates {
		done0 = s0.Observe(params.Spec{Value: seq, Index: seq % 2})
	}

	if !done0 {
		t.Fatal("subscriber 0 not done after every update")
	}

	if s1.Observe(params.Spec{Value: 5, Index: 1}) {
		t.Fatal("subscriber 1 done with resource 0 missing")
	}

	if !s1.Observe(params.Spec{Value: 4, Index: 0}) {
		t.Fatal("subscriber 1 not done after both final states")
	}

	f.Cut()

	st := f.Stats()
	if st.Samples != 8 || st.Expected != 12 || st.Complete != 2 || st.Cut != 1 {
		t.Fatalf("stats = %+v", st)
	}

	if st.P50 < 0 || st.Max < st.P99 || st.P99 < st.P50 {
		t.Fatalf("percentiles out of order: %+v", st)
	}
}

func TestChainTracker(t *testing.T) {
	tr := NewChainTracker(2, 4, 1004)

	tr.Set(0, 4)

	select {
	case <-tr.Reached[0]:
		t.Fatal("target reached with one resource")
	default:
	}

	tr.Set(1, 3)
	tr.Set(1, 4)

	select {
	case <-tr.Reached[0]:
	case <-time.After(time.Second):
		t.Fatal("target 4 not reached")
	}

	tr.Set(0, 1004)
	tr.Remove(1)
	tr.Reset()
	tr.Set(0, 1004)
	tr.Set(1, 1004)

	select {
	case <-tr.Reached[1]:
	case <-time.After(time.Second):
		t.Fatal("target 1004 not reached after a reset")
	}
}

func TestPercentile(t *testing.T) {
	d := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if Percentile(d, 50) != 5 || Percentile(d, 99) != 10 || Percentile(nil, 50) != 0 {
		t.Fatal("percentile")
	}
}
