package typed_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// linkSpec has mutable parts and copies itself.
type linkSpec struct {
	Addrs []string
	Opts  map[string]int
	MTU   int
}

func (s linkSpec) DeepCopy() linkSpec {
	return linkSpec{MTU: s.MTU, Addrs: slices.Clone(s.Addrs), Opts: cloneMap(s.Opts)}
}

func cloneMap(m map[string]int) map[string]int {
	if m == nil {
		return nil
	}
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

type linkDef struct{}

func (linkDef) Definition() typed.Definition {
	return typed.Definition{Type: "Links.net.resgraph.dev", DefaultNamespace: "network"}
}

type link = typed.Resource[linkSpec, linkDef]

// countSpec is a plain value spec without DeepCopy or Equal.
type countSpec struct{ N int }

type countDef struct{}

func (countDef) Definition() typed.Definition {
	return typed.Definition{Type: "Counts.test.resgraph.dev", DefaultNamespace: "default"}
}

type count = typed.Resource[countSpec, countDef]

// modSpec decides its own equality: values equal modulo 10.
type modSpec struct{ N int }

func (s modSpec) Equal(other any) bool {
	o, ok := other.(modSpec)
	return ok && s.N%10 == o.N%10
}

type modDef struct{}

func (modDef) Definition() typed.Definition {
	return typed.Definition{Type: "Mods.test.resgraph.dev", DefaultNamespace: "default"}
}

func TestDefinitionOnNil(t *testing.T) {
	var l *link
	assert.Equal(t, typed.Definition{Type: "Links.net.resgraph.dev", DefaultNamespace: "network"}, l.Definition())
	assert.Equal(t, "Counts.test.resgraph.dev", (*count)(nil).Definition().Type)
}

func TestNew(t *testing.T) {
	md := resource.NewMetadata("ns", "Links.net.resgraph.dev", "eth0", resource.NewVersion(3))
	r := typed.New[linkSpec, linkDef](md, linkSpec{MTU: 1500})
	assert.Equal(t, "eth0", r.Metadata().ID())
	assert.Equal(t, uint64(3), r.Metadata().Version().Value())
	assert.Equal(t, linkSpec{MTU: 1500}, r.Spec())
	assert.Equal(t, 1500, r.TypedSpec().MTU)

	r.TypedSpec().MTU = 9000
	assert.Equal(t, 9000, r.Spec().(linkSpec).MTU, "TypedSpec points into the resource")

	d := typed.NewDefault[linkSpec, linkDef]("eth1", linkSpec{})
	assert.Equal(t, resource.NewPointer("network", "Links.net.resgraph.dev", "eth1"), resource.PointerOf(d.Metadata()))
	assert.Equal(t, resource.VersionUndefined, d.Metadata().Version())

	var _ resource.Resource = r
	var _ resource.SpecEqualer = r
}

// TestR2_NewOwnsItsMetadata: a resource built by New shares no mutable
// metadata (labels, annotations, finalizers) with the Metadata value it was
// built from, so one Metadata can seed several resources.
func TestR2_NewOwnsItsMetadata(t *testing.T) {
	md := resource.NewMetadata("network", "Links.net.resgraph.dev", "eth0", resource.VersionUndefined)
	md.Labels().Set("k", "v")
	md.Annotations().Set("a", "1")
	md.Finalizers().Add("f")
	r1 := typed.New[linkSpec, linkDef](md, linkSpec{})
	r2 := typed.New[linkSpec, linkDef](md, linkSpec{})

	r2.Metadata().Labels().Set("k", "changed")
	r2.Metadata().Annotations().Set("a", "changed")
	*r2.Metadata().Finalizers() = append((*r2.Metadata().Finalizers())[:0], "g")
	md.Labels().Set("extra", "x")

	for _, r := range []*link{r1} {
		v, _ := r.Metadata().Labels().Get("k")
		assert.Equal(t, "v", v)
		assert.Equal(t, 1, r.Metadata().Labels().Len())
		a, _ := r.Metadata().Annotations().Get("a")
		assert.Equal(t, "1", a)
		assert.Equal(t, resource.Finalizers{"f"}, *r.Metadata().Finalizers())
	}
	v, _ := md.Labels().Get("k")
	assert.Equal(t, "v", v, "the caller's metadata is not changed through the resource")
}

func TestR2_DeepCopyUsesSpecDeepCopy(t *testing.T) {
	r := typed.NewDefault[linkSpec, linkDef]("eth0", linkSpec{MTU: 1500, Addrs: []string{"10.0.0.1"}, Opts: map[string]int{"a": 1}})
	r.Metadata().Labels().Set("k", "v")
	r.Metadata().Finalizers().Add("f")

	c, ok := r.DeepCopy().(*link)
	require.True(t, ok)
	require.True(t, resource.Equal(r, c))

	c.TypedSpec().Addrs[0] = "mutated"
	c.TypedSpec().Addrs = append(c.TypedSpec().Addrs, "added")
	c.TypedSpec().Opts["a"] = 2
	c.TypedSpec().MTU = 1
	c.Metadata().Labels().Set("k", "mutated")
	c.Metadata().Finalizers().Add("g")

	assert.Equal(t, linkSpec{MTU: 1500, Addrs: []string{"10.0.0.1"}, Opts: map[string]int{"a": 1}}, *r.TypedSpec())
	v, _ := r.Metadata().Labels().Get("k")
	assert.Equal(t, "v", v)
	assert.Equal(t, resource.Finalizers{"f"}, *r.Metadata().Finalizers())
}

func TestR2_DeepCopyByAssignment(t *testing.T) {
	r := typed.NewDefault[countSpec, countDef]("a", countSpec{N: 1})
	c := r.DeepCopy().(*count)
	c.TypedSpec().N = 2
	assert.Equal(t, 1, r.TypedSpec().N)
}

func TestR1_SpecEqual(t *testing.T) {
	a := typed.NewDefault[linkSpec, linkDef]("eth0", linkSpec{MTU: 1500, Addrs: []string{"x"}})
	b := typed.NewDefault[linkSpec, linkDef]("eth0", linkSpec{MTU: 1500, Addrs: []string{"x"}})
	eq, ok := a.SpecEqual(b)
	assert.True(t, ok)
	assert.True(t, eq, "deep equality")
	assert.True(t, resource.Equal(a, b))

	b.TypedSpec().Addrs = []string{"y"}
	eq, ok = a.SpecEqual(b)
	assert.True(t, ok)
	assert.False(t, eq)
	assert.False(t, resource.Equal(a, b))

	other := typed.NewDefault[countSpec, countDef]("eth0", countSpec{})
	_, ok = a.SpecEqual(other)
	assert.False(t, ok, "another type: not decided by SpecEqual")
	assert.False(t, resource.Equal(a, other))

	m1 := typed.NewDefault[modSpec, modDef]("m", modSpec{N: 3})
	m2 := typed.NewDefault[modSpec, modDef]("m", modSpec{N: 13})
	eq, ok = m1.SpecEqual(m2)
	assert.True(t, ok)
	assert.True(t, eq, "the spec's Equal method decides")
	assert.True(t, resource.Equal(m1, m2))
	m2.TypedSpec().N = 4
	assert.False(t, resource.Equal(m1, m2))
}

func TestR1_MetadataStillCompared(t *testing.T) {
	a := typed.NewDefault[countSpec, countDef]("a", countSpec{N: 1})
	b := a.DeepCopy().(*count)
	b.Metadata().SetVersion(resource.NewVersion(5))
	assert.False(t, resource.Equal(a, b), "equal specs, different versions")
}

// TestR2_CopyIntoIsADeepCopyInPlace: CopyInto makes the resource given a
// deep copy (rule R2: independent of the original) in its own storage,
// replacing everything it held; it refuses, changing nothing, a resource
// of another type, the original itself and a shared (frozen) snapshot.
func TestR2_CopyIntoIsADeepCopyInPlace(t *testing.T) {
	r := typed.NewDefault[linkSpec, linkDef]("eth0", linkSpec{MTU: 1500, Addrs: []string{"10.0.0.1"}, Opts: map[string]int{"a": 1}})
	r.Metadata().Labels().Set("k", "v")
	r.Metadata().Finalizers().Add("f")

	dst := typed.NewDefault[linkSpec, linkDef]("old", linkSpec{MTU: 9000, Addrs: []string{"x", "y"}})
	dst.Metadata().Labels().Set("old", "1")
	require.True(t, r.CopyInto(dst))
	require.True(t, resource.Equal(r, dst), "a copy of r, nothing of what dst held")

	dst.TypedSpec().Addrs[0] = "mutated"
	dst.TypedSpec().Opts["a"] = 2
	dst.Metadata().Labels().Set("k", "mutated")
	dst.Metadata().Finalizers().Add("g")
	assert.Equal(t, linkSpec{MTU: 1500, Addrs: []string{"10.0.0.1"}, Opts: map[string]int{"a": 1}}, *r.TypedSpec())
	v, _ := r.Metadata().Labels().Get("k")
	assert.Equal(t, "v", v)
	assert.Equal(t, resource.Finalizers{"f"}, *r.Metadata().Finalizers())

	other := typed.NewDefault[countSpec, countDef]("eth0", countSpec{N: 7})
	assert.False(t, r.CopyInto(other), "another type")
	assert.Equal(t, 7, other.TypedSpec().N)
	assert.False(t, r.CopyInto(r), "itself")
	assert.False(t, r.CopyInto(nil))

	frozen := typed.NewDefault[linkSpec, linkDef]("eth1", linkSpec{MTU: 1})
	frozen.Metadata().Freeze()
	assert.False(t, r.CopyInto(frozen), "a shared snapshot")
	assert.Equal(t, 1, frozen.TypedSpec().MTU)
	assert.Equal(t, "eth1", frozen.Metadata().ID())
}
