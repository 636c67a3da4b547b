package floor

import (
	"errors"
	"testing"

	"github.com/resgraph/resgraph/bench/common/params"
)

func TestStore(t *testing.T) {
	s := New()

	for _, i := range []int{2, 0, 1} {
		if err := s.Create(newA(i, i)); err != nil {
			t.Fatal(err)
		}
	}

	if err := s.Create(newA(1, 0)); !errors.Is(err, ErrExists) {
		t.Fatalf("second Create: %v", err)
	}

	o, err := s.Get(params.NS, params.AType, params.ID(1))
	if err != nil || o.Version != 1 || o.Spec.Value != 1 {
		t.Fatalf("Get = %+v, %v", o, err)
	}

	o.Spec.Value = 10 // a copy: the store must not change

	if again, _ := s.Get(params.NS, params.AType, params.ID(1)); again.Spec.Value != 1 {
		t.Fatal("Get returned shared memory")
	}

	if err = s.Update(o); err != nil || o.Version != 2 {
		t.Fatalf("Update: %v, version %d", err, o.Version)
	}

	stale := *o
	stale.Version = 1

	if err = s.Update(&stale); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale Update: %v", err)
	}

	l := s.List(params.NS, params.AType)
	if len(l) != 3 || l[0].ID != params.ID(0) || l[2].ID != params.ID(2) || l[1].Spec.Value != 10 {
		t.Fatalf("List = %+v", l)
	}

	if _, err = s.Get(params.NS, params.BType, params.ID(0)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of another kind: %v", err)
	}
}
