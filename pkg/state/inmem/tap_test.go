package inmem

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

type tapFunc func(rev uint64, old, new resource.Resource, at int64)

func (f tapFunc) Committed(rev uint64, old, new resource.Resource, at int64) { f(rev, old, new, at) }

// TestKindTap_EveryCommitFromTapToRemove: a kind tap is handed every
// change of its kind committed between TapKind and its remove, in order,
// with the versions before and after, at increasing revisions and write
// times; none of another kind, none after the remove.
func TestKindTap_EveryCommitFromTapToRemove(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("before", 0)))
	var calls []string
	var revs, ats []int64
	version := func(r resource.Resource) string {
		if r == nil {
			return "-"
		}
		return fmt.Sprint(r.Metadata().Version().Value())
	}
	tap := tapFunc(func(rev uint64, old, new resource.Resource, at int64) {
		r := new
		if r == nil {
			r = old
		}
		calls = append(calls, r.Metadata().ID()+" "+version(old)+">"+version(new))
		revs, ats = append(revs, int64(rev)), append(ats, at)
	})
	remove, err := st.(kindtap.Tapper).TapKind(resource.NewKind(testNS, testType), tap)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	other := typed.New[pairSpec, pairDef](resource.NewMetadata(testNS, "Others.test.resgraph.dev", "o", resource.VersionUndefined), pairSpec{})
	require.NoError(t, st.Create(ctx, other))
	_, err = st.UpdateWithConflicts(ctx, ptr("a"), func(r resource.Resource) error { r.(*pair).TypedSpec().A = 2; return nil })
	require.NoError(t, err)
	require.NoError(t, st.Destroy(ctx, ptr("a")))
	remove()
	require.NoError(t, st.Create(ctx, newPair("after", 3)))
	assert.Equal(t, []string{"a ->1", "a 1>2", "a 2>-"}, calls)
	assert.IsIncreasing(t, revs)
	assert.IsNonDecreasing(t, ats)
}

// countTap counts the calls it is handed (a pointer: comparable).
type countTap struct{ n int }

func (c *countTap) Committed(uint64, resource.Resource, resource.Resource, int64) { c.n++ }

// TestKindTap_OneTapIsCalledByTheWriteItself: a kind with one tap has the
// write call that tap itself (one interface call a change, no loop nor
// wrapper); with several, each is called once a change in the order they
// were set (a tap set twice, twice); a removed tap is no longer called,
// and the one left is again called directly.
func TestKindTap_OneTapIsCalledByTheWriteItself(t *testing.T) {
	c := newCore()
	ctx := t.Context()
	kind := resource.NewKind(testNS, testType)
	ks := c.store(resource.KindOf(kind))
	a, b := &countTap{}, &countTap{}
	write := func(id string) { require.NoError(t, c.Create(ctx, newPair(id, 0))) }
	removeA, err := c.TapKind(kind, a)
	require.NoError(t, err)
	assert.Same(t, a, ks.tap, "one tap: the write calls it directly")
	write("1")
	removeB, err := c.TapKind(kind, b)
	require.NoError(t, err)
	removeB2, err := c.TapKind(kind, b)
	require.NoError(t, err)
	write("2")
	assert.Equal(t, [2]int{2, 2}, [2]int{a.n, b.n}, "a once a change, b (set twice) twice")
	removeA()
	removeB()
	assert.Same(t, b, ks.tap, "the tap left is called directly again")
	write("3")
	assert.Equal(t, [2]int{2, 3}, [2]int{a.n, b.n})
	removeB2()
	assert.Nil(t, ks.tap)
	write("4")
	assert.Equal(t, [2]int{2, 3}, [2]int{a.n, b.n}, "no tap is called once every tap is removed")
}
