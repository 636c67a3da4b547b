package plaincopy

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestOfAndCopyWithoutAnImplementationCopyNothing: until implementations
// are registered (this package's tests do not import package typed), and
// again after Register(nil, nil, nil), Of, Copy and ForType report false for every
// resource and call none of its methods; registered implementations get
// the resource (and the owned flag) as given.
func TestOfAndCopyWithoutAnImplementationCopyNothing(t *testing.T) {
	r := resource.NewTombstone(resource.NewPointer("default", "Things.test.resgraph.dev", "a"))
	if stored, md, size, ok := Of(r, false); ok || stored != nil || md != nil || size != 0 {
		t.Fatalf("Of without an implementation: %v %v %d %t, want nothing and false", stored, md, size, ok)
	}
	if c, ok := Copy(r); ok || c != nil {
		t.Fatalf("Copy without an implementation: %v %t, want nil and false", c, ok)
	}
	if f, ok := ForType(r); ok || f != nil {
		t.Fatalf("ForType without an implementation: %t, want nil and false", ok)
	}

	var got, copied, typed resource.Resource
	var gotOwned bool
	Register(func(r resource.Resource, owned bool) (resource.Resource, *resource.Metadata, int, bool) {
		got, gotOwned = r, owned
		return r, r.Metadata(), 7, true
	}, func(r resource.Resource) (resource.Resource, bool) {
		copied = r
		return r, true
	}, func(r resource.Resource) (Func, bool) {
		typed = r
		return of, true
	})
	t.Cleanup(func() { Register(nil, nil, nil) })
	if stored, md, size, ok := Of(r, true); !ok || stored != r || md != r.Metadata() || size != 7 || got != r || !gotOwned {
		t.Fatalf("Of with an implementation: %v %v %d %t (it got %v, owned %t)", stored, md, size, ok, got, gotOwned)
	}
	if c, ok := Copy(r); !ok || c != r || copied != r {
		t.Fatalf("Copy with an implementation: %v %t (it got %v)", c, ok, copied)
	}

	if f, ok := ForType(r); !ok || f == nil || typed != r {
		t.Fatalf("ForType with an implementation: %t (it got %v)", ok, typed)
	}
	Register(nil, nil, nil)
	if _, _, _, ok := Of(r, false); ok {
		t.Fatal("Of after Register(nil, nil, nil) reports true")
	}
	if _, ok := ForType(r); ok {
		t.Fatal("ForType after Register(nil, nil, nil) reports true")
	}
	if _, ok := Copy(r); ok {
		t.Fatal("Copy after Register(nil, nil, nil) reports true")
	}
}
