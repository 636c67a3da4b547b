package opt

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type options struct{ calls []int }

type option func(*options)

func TestApplySkipsNil(t *testing.T) {
	var o options
	add := func(n int) option { return func(o *options) { o.calls = append(o.calls, n) } }
	Apply(&o, []option{add(1), nil, add(2), nil})
	if len(o.calls) != 2 || o.calls[0] != 1 || o.calls[1] != 2 {
		t.Fatalf("calls %v, want [1 2]", o.calls)
	}
	Apply(&o, []option(nil))
}

func TestApplyPooledAllocatesNothing(t *testing.T) {
	type options struct{ n *int }
	var pool Pool[options]
	one := 1
	set := func(o *options) { o.n = &one }
	opts := []func(*options){set, nil}
	ApplyPooled(&pool, options{}, opts) // fills the pool
	if a := testing.AllocsPerRun(100, func() {
		if o := ApplyPooled(&pool, options{}, opts); o.n != &one {
			t.Fatal("option not applied")
		}
	}); a != 0 {
		t.Fatalf("%v allocations per call, want 0", a)
	}
	var none []func(*options)
	if o := ApplyPooled(&pool, options{n: &one}, none); o.n != &one {
		t.Fatal("defaults not returned without options")
	}
}
