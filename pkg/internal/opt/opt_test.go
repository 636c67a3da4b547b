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
