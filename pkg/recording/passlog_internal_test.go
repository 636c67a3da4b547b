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
		l.add("c", ptr("a", "x", false), uint64(i+1), uint64(10+i), 0, resource.PointerKey{})
		l.add("c", ptr("b", "x", false), uint64(i+1), uint64(500+i), 0, resource.PointerKey{})
	}
	r := l.reads()
	for i := range 100 {
		read, _ := r.of(ptr("a", "x", true), uint64(i+1), 1000)
		assert.Equal(t, uint64(10+i), read)
		read, _ = r.of(ptr("b", "x", true), uint64(i+1), 1000)
		assert.Equal(t, uint64(500+i), read)
	}
}
