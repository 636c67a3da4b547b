package recording

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestRC9_APassLogFindsACommitWhateverItsStringsAddresses: the pass log
// keeps a kind's hash by the address of its strings; a commit is found
// by its kind, ID and version however the strings naming it were built
// (interned, constants, copies), and two kinds whose strings share an
// address in turn are not mixed up.
func TestRC9_APassLogFindsACommitWhateverItsStringsAddresses(t *testing.T) {
	l := newPassLog()
	typ := "As.test.resgraph.dev" // one address for both kinds
	ptr := func(ns, id string, clone bool) resource.PointerKey {
		t := typ
		if clone {
			t = strings.Clone(typ)
		}
		return resource.PointerOf(resource.NewPointer(strings.Clone(ns), t, strings.Clone(id)))
	}
	for i := range 100 {
		l.Committed("c", ptr("a", "x", false), uint64(i+1), uint64(10+i), 0, nil)
		l.Committed("c", ptr("b", "x", false), uint64(i+1), uint64(500+i), 0, nil)
	}
	r := l.readsNow()
	for i := range 100 {
		read, _ := r.of(ptr("a", "x", true), uint64(i+1), 1000)
		assert.Equal(t, uint64(10+i), read)
		read, _ = r.of(ptr("b", "x", true), uint64(i+1), 1000)
		assert.Equal(t, uint64(500+i), read)
	}
}

// TestRC13_APassReadsLoggedOutOfOrderAreWrittenInOrder: a pass whose
// reads were logged out of their numbers' order (two goroutines of one
// pass), or with a number twice, is taken with its reads in order, each
// number once: the decoder refuses a pass whose reads' numbers do not
// increase (a demo recording under load was refused so: "read 2 of a
// pass: number 1").
func TestRC13_APassReadsLoggedOutOfOrderAreWrittenInOrder(t *testing.T) {
	l := newPassLog()
	kind := resource.KindOf(resource.NewKind("a", "As.test.resgraph.dev"))
	for _, rd := range []struct {
		index uint32
		rev   uint64
	}{{0, 5}, {2, 7}, {1, 6}, {2, 8}} {
		l.Read("c", 1, rd.index, rd.rev, kind, nil)
	}
	passes := l.passes(1, []Kind{{Namespace: "a", Type: "As.test.resgraph.dev"}}, nil)
	assert.Len(t, passes, 1)
	assert.Equal(t, []PassRead{{0, 5, kind}, {1, 6, kind}, {2, 7, kind}}, passes[0].Reads)
}

// TestRC9_APassLogFindsACommitWhateverPointerNamedIt: a commit the
// Runtime tells with the written resource's metadata, a PointerKey or
// another Pointer is found by its PointerKey, with its item (none when
// the tap said nil).
func TestRC9_APassLogFindsACommitWhateverPointerNamedIt(t *testing.T) {
	l := newPassLog()
	const typ = "As.test.resgraph.dev"
	md := resource.NewMetadata("a", typ, "m", resource.NewVersion(3))
	item := resource.PointerOf(resource.NewPointer("a", "Items.test.resgraph.dev", "i"))
	l.Committed("c", &md, 3, 30, 1, &item)
	l.Committed("c", resource.PointerOf(resource.NewPointer("a", typ, "k")), 4, 40, 2, nil)
	l.Committed("c", otherPointer{resource.NewPointer("a", typ, "o")}, 5, 50, 3, nil)
	r := l.readsNow()
	for _, want := range []struct {
		id      string
		version uint64
		read    uint64
		item    resource.PointerKey
	}{{"m", 3, 30, item}, {"k", 4, 40, resource.PointerKey{}}, {"o", 5, 50, resource.PointerKey{}}} {
		read, it := r.of(resource.PointerOf(resource.NewPointer("a", typ, want.id)), want.version, 1000)
		assert.Equal(t, want.read, read, want.id)
		assert.Equal(t, want.item, it, want.id)
	}
}

// otherPointer is a Pointer that is neither a PointerKey nor metadata.
type otherPointer struct{ resource.Pointer }
