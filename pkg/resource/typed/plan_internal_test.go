package typed

import (
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Spec types of the plan table's tests, each used by one test only (a
// type's first use is what enters it).
type (
	tableSpecA struct{ A int }
	tableSpecB struct{ B []string }
	tableSpecC struct{ C map[string]int }
	tableSpecD struct{ D string }
	tableSpecE [3]int
)

// TestAPlanIsFoundByItsSpecTypeWhateverTheTableHolds: planOf returns the
// one plan of its spec type (the plan plans holds, of that type) on
// first use and after; and when every slot a type may probe holds other
// types' plans, it still finds its own, through plans.
func TestAPlanIsFoundByItsSpecTypeWhateverTheTableHolds(t *testing.T) {
	a := planOf[tableSpecA]()
	require.Equal(t, reflect.TypeFor[tableSpecA](), a.spec)
	assert.Same(t, a, planOf[tableSpecA](), "found in the table")
	b := planOf[tableSpecB]()
	require.Equal(t, reflect.TypeFor[tableSpecB](), b.spec)
	assert.Same(t, b, planOf[tableSpecB]())
	v, ok := plans.Load(reflect.TypeFor[tableSpecA]())
	require.True(t, ok)
	assert.Same(t, a, v.(*plan[tableSpecA]))

	// Fill tableSpecD's probe window with tableSpecB's plan (an entry a
	// type assertion to *plan[tableSpecD] refuses), then restore it.
	planTableMu.Lock()
	start := planSlot(any((*plan[tableSpecD])(nil)))
	saved := make([]*planEntry, planProbes)
	for n := range planProbes {
		i := (start + n) & (planTableSize - 1)
		saved[n] = planTable[i].Load()
		planTable[i].Store(&planEntry{plan: b})
	}
	planTableMu.Unlock()
	defer func() {
		planTableMu.Lock()
		defer planTableMu.Unlock()
		for n := range planProbes {
			planTable[(start+n)&(planTableSize-1)].Store(saved[n])
		}
	}()
	d := planOf[tableSpecD]()
	require.Equal(t, reflect.TypeFor[tableSpecD](), d.spec, "a full window: found in plans")
	assert.Same(t, d, planOf[tableSpecD]())
}

// TestPlansEnteredAtOnceAreEnteredOnce: goroutines asking for the plans
// of new spec types at once all get the one plan of each type, and each
// type takes at most one slot of the table, however often it is entered.
func TestPlansEnteredAtOnceAreEnteredOnce(t *testing.T) {
	var wg sync.WaitGroup
	got := make([][2]any, 8)
	for g := range got {
		wg.Go(func() { got[g] = [2]any{planOf[tableSpecC](), planOf[tableSpecE]()} })
	}
	wg.Wait()
	planOfSlow[tableSpecE]() // entered again: found there
	for _, g := range got {
		assert.Same(t, got[0][0], g[0])
		assert.Same(t, got[0][1], g[1])
	}
	count := func(key any) int {
		n := 0
		for i := range planTable {
			if e := planTable[i].Load(); e != nil && reflect.TypeOf(e.plan) == reflect.TypeOf(key) {
				n++
			}
		}
		return n
	}
	assert.Equal(t, 1, count(any((*plan[tableSpecC])(nil))))
	assert.Equal(t, 1, count(any((*plan[tableSpecE])(nil))))
}
