package typed_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/internal/plaincopy"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// TestR2_AStoredCopyIsTheDeepCopyOfAResourceThatCopiesPlainly: the one
// call a state makes to store a typed resource (plaincopy.Of) gives
// exactly what DeepCopy, Metadata and ApproxSize give, for exactly the
// resources that usercode.CopiesPlainly reports (a typed resource of a
// plain spec, not a type embedding one, nor a spec with references); an
// owned resource is stored itself, and a copy shares no memory with r.
func TestR2_AStoredCopyIsTheDeepCopyOfAResourceThatCopiesPlainly(t *testing.T) {
	md := resource.NewMetadata("default", "Plains.test.resgraph.dev", "p", resource.VersionUndefined)
	md.Labels().Set("app", "x")
	r := typed.New[plainMethodSpec, plainDef](md, plainMethodSpec{N: 1, Name: "a name", Pair: [2]int64{2, 3}})

	stored, smd, size, ok := plaincopy.Of(r, false)
	require.True(t, ok)
	c, isPlain := stored.(*plainRes)
	require.True(t, isPlain, "%T", stored)
	require.NotSame(t, r, c, "a copy")
	assert.Same(t, c.Metadata(), smd, "the copy's metadata")
	assert.Equal(t, *r.TypedSpec(), *c.TypedSpec())
	assert.True(t, r.Metadata().Equal(*c.Metadata()))
	assert.Equal(t, r.DeepCopy().(*plainRes).ApproxSize(), size)
	assert.Equal(t, c.ApproxSize(), size)
	assert.Greater(t, size, r.ApproxSize()-len("a name"), "the spec's string is counted")
	c.Metadata().Labels().Set("app", "changed")
	c.TypedSpec().N = 9
	v, _ := r.Metadata().Labels().Get("app")
	assert.Equal(t, "x", v, "the copy shares no labels with r")
	assert.Equal(t, 1, r.TypedSpec().N)

	stored, smd, size, ok = plaincopy.Of(r, true)
	require.True(t, ok)
	assert.Same(t, r, stored.(*plainRes), "owned: r itself")
	assert.Same(t, r.Metadata(), smd)
	assert.Equal(t, r.ApproxSize(), size)

	n := typed.New[countSpec, countDef](resource.NewMetadata("default", "Counts.test.resgraph.dev", "n", resource.VersionUndefined), countSpec{N: 1})
	l := typed.New[linkSpec, linkDef](resource.NewMetadata("network", "Links.net.resgraph.dev", "l", resource.VersionUndefined), linkSpec{MTU: 1})
	for name, x := range map[string]resource.Resource{
		"plain spec":                   r,
		"plain spec without methods":   n,
		"spec with references":         l,
		"a type embedding a plain one": embedsPlain{r},
	} {
		stored, smd, size, ok := plaincopy.Of(x, false)
		assert.Equal(t, usercode.CopiesPlainly(x), ok, name)
		if !ok {
			assert.True(t, stored == nil && smd == nil && size == 0, "%s: nothing but false", name)
		}
	}
}

// TestR2_APlainCopyIsTheDeepCopyOfAResourceThatCopiesPlainly: the one
// call DeepCopyOf makes for a typed resource (plaincopy.Copy) gives what
// DeepCopy gives, sharing no memory with r, for exactly the resources that
// usercode.CopiesPlainly reports.
func TestR2_APlainCopyIsTheDeepCopyOfAResourceThatCopiesPlainly(t *testing.T) {
	md := resource.NewMetadata("default", "Plains.test.resgraph.dev", "p", resource.VersionUndefined)
	md.Labels().Set("app", "x")
	r := typed.New[plainMethodSpec, plainDef](md, plainMethodSpec{N: 1, Name: "a name", Pair: [2]int64{2, 3}})

	cp, ok := plaincopy.Copy(r)
	require.True(t, ok)
	c, isPlain := cp.(*plainRes)
	require.True(t, isPlain, "%T", cp)
	require.NotSame(t, r, c, "a copy")
	assert.Equal(t, *r.TypedSpec(), *c.TypedSpec())
	assert.True(t, r.Metadata().Equal(*c.Metadata()))
	c.Metadata().Labels().Set("app", "changed")
	c.TypedSpec().N = 9
	v, _ := r.Metadata().Labels().Get("app")
	assert.Equal(t, "x", v, "the copy shares no labels with r")
	assert.Equal(t, 1, r.TypedSpec().N)

	n := typed.New[countSpec, countDef](resource.NewMetadata("default", "Counts.test.resgraph.dev", "n", resource.VersionUndefined), countSpec{N: 1})
	l := typed.New[linkSpec, linkDef](resource.NewMetadata("network", "Links.net.resgraph.dev", "l", resource.VersionUndefined), linkSpec{MTU: 1})
	for name, x := range map[string]resource.Resource{
		"plain spec":                   r,
		"plain spec without methods":   n,
		"spec with references":         l,
		"a type embedding a plain one": embedsPlain{r},
	} {
		cp, ok := plaincopy.Copy(x)
		assert.Equal(t, usercode.CopiesPlainly(x), ok, name)
		if !ok {
			assert.Nil(t, cp, "%s: nothing but false", name)
		}
	}
}

// TestR2_AStoredCopyOfTheTypeIsTheStoredCopyOfEachResourceOfIt: the Of
// of a type (plaincopy.ForType), asked once, gives for every resource of
// that very type what plaincopy.Of gives (a copy, or the resource itself
// when owned, its metadata and its ApproxSize), and false for a resource
// of any other type, a type embedding it included, and for a nil one of
// the type; a type whose resources Of refuses has none.
func TestR2_AStoredCopyOfTheTypeIsTheStoredCopyOfEachResourceOfIt(t *testing.T) {
	md := resource.NewMetadata("default", "Plains.test.resgraph.dev", "p", resource.VersionUndefined)
	r := typed.New[plainMethodSpec, plainDef](md, plainMethodSpec{N: 1, Name: "a name", Pair: [2]int64{2, 3}})
	of, ok := plaincopy.ForType(r)
	require.True(t, ok)

	md2 := resource.NewMetadata("other", "Plains.test.resgraph.dev", "q", resource.VersionUndefined)
	md2.Labels().Set("app", "x")
	q := typed.New[plainMethodSpec, plainDef](md2, plainMethodSpec{N: 2, Name: "a longer name"})
	stored, smd, size, ok := of(q, false)
	require.True(t, ok, "another resource of the type")
	c, isPlain := stored.(*plainRes)
	require.True(t, isPlain, "%T", stored)
	require.NotSame(t, q, c, "a copy")
	assert.Same(t, c.Metadata(), smd, "the copy's metadata")
	assert.Equal(t, *q.TypedSpec(), *c.TypedSpec())
	assert.True(t, q.Metadata().Equal(*c.Metadata()))
	_, _, wantSize, _ := plaincopy.Of(q, false)
	assert.Equal(t, wantSize, size)
	assert.Equal(t, c.ApproxSize(), size)
	c.Metadata().Labels().Set("app", "changed")
	v, _ := q.Metadata().Labels().Get("app")
	assert.Equal(t, "x", v, "the copy shares no labels with q")

	stored, smd, size, ok = of(q, true)
	require.True(t, ok)
	assert.Same(t, q, stored.(*plainRes), "owned: q itself")
	assert.Same(t, q.Metadata(), smd)
	assert.Equal(t, q.ApproxSize(), size)

	n := typed.New[countSpec, countDef](resource.NewMetadata("default", "Counts.test.resgraph.dev", "n", resource.VersionUndefined), countSpec{N: 1})
	for name, x := range map[string]resource.Resource{
		"a resource of another type":   n,
		"a type embedding the type":    embedsPlain{q},
		"a tombstone, of another type": resource.NewTombstone(resource.NewPointer("default", "Plains.test.resgraph.dev", "p")),
		"a nil resource of the type":   (*plainRes)(nil),
	} {
		stored, smd, size, ok := of(x, false)
		assert.False(t, ok, name)
		assert.True(t, stored == nil && smd == nil && size == 0, "%s: nothing but false", name)
	}

	l := typed.New[linkSpec, linkDef](resource.NewMetadata("network", "Links.net.resgraph.dev", "l", resource.VersionUndefined), linkSpec{MTU: 1})
	for name, x := range map[string]resource.Resource{
		"spec with references":         l,
		"a type embedding a plain one": embedsPlain{r},
	} {
		of, ok := plaincopy.ForType(x)
		assert.False(t, ok, name)
		assert.Nil(t, of, name)
	}
}
