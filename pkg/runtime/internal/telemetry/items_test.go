package telemetry

import (
	"fmt"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
)

// TestItemTableChainsCollidingItems: items whose hashes collide (forced
// here: 400 items, over two pages of slots, get one of three hashes) each
// keep their own entry through adds and removals in any position of their
// chain, freed slots are reused and hold no item, and an item and its map
// item are distinct.
func TestItemTableChainsCollidingItems(t *testing.T) {
	tb := newItemTable()
	const n = 200 // 400 items: more than a page of slots
	items := make([]work.Item, 0, 2*n)
	for i := range n {
		ptr := resource.NewPointerKey("ns", "T", resource.ID(fmt.Sprint("id", i)))
		items = append(items, work.Reconcile(ptr), work.Map(ptr))
	}
	hashOf := func(k int) uint64 { return uint64(k % 3) }
	want := map[work.Item]uint32{}
	check := func(stage string) {
		t.Helper()
		for k, it := range items {
			i, _ := tb.find(hashOf(k), it)
			c, ok := want[it]
			switch {
			case ok && i < 0:
				t.Fatalf("%s: %v lost", stage, it)
			case !ok && i >= 0:
				t.Fatalf("%s: %v has an entry after removal", stage, it)
			case ok && tb.slot(i).p.causes != c:
				t.Fatalf("%s: %v has causes %d, want %d", stage, it, tb.slot(i).p.causes, c)
			}
		}
		if tb.len() != len(want) {
			t.Fatalf("%s: %d entries, want %d", stage, tb.len(), len(want))
		}
	}
	for k, it := range items {
		tb.get(hashOf(k), it).causes = uint32(k + 1)
		want[it] = uint32(k + 1)
	}
	check("added")
	// Remove every third item: first, middle and last positions of the
	// chains all occur.
	for k, it := range items {
		if k%3 == k/3%3 {
			i, prev := tb.find(hashOf(k), it)
			tb.remove(hashOf(k), i, prev)
			delete(want, it)
		}
	}
	check("removed")
	for i := tb.free; i >= 0; i = tb.slot(i).next {
		if tb.slot(i).item != (work.Item{}) || tb.slot(i).p.set {
			t.Fatalf("free slot %d keeps %v", i, tb.slot(i).item)
		}
	}
	slots := tb.n
	for k, it := range items {
		if _, ok := want[it]; !ok {
			tb.get(hashOf(k), it).causes = 100
			want[it] = 100
		}
	}
	check("added again")
	if tb.n != slots {
		t.Fatalf("%d slots after re-adding, want the %d freed ones reused", tb.n, slots)
	}
	for k, it := range items {
		i, prev := tb.find(hashOf(k), it)
		tb.remove(hashOf(k), i, prev)
		delete(want, it)
	}
	check("emptied")
	if len(tb.index) != 0 {
		t.Fatalf("%d hashes indexed in an empty table", len(tb.index))
	}
}

// TestItemHashSeparatesMapItems: an item's reconcile and map items hash
// differently, and an item hashes the same every time.
func TestItemHashSeparatesMapItems(t *testing.T) {
	tb := newItemTable()
	ptr := resource.NewPointerKey("ns", "T", "id")
	if tb.hash(work.Reconcile(ptr)) == tb.hash(work.Map(ptr)) {
		t.Fatal("reconcile and map items of one resource share a hash")
	}
	if tb.hash(work.Map(ptr)) != tb.hash(work.Map(resource.NewPointerKey("ns", "T", "id"))) {
		t.Fatal("an item's hash changed")
	}
}
