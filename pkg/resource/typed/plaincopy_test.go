package typed_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// plainMethodSpec is a plain-value spec with copy methods that panic: a
// copy must not call them.
type plainMethodSpec struct {
	N    int
	Name string
	Pair [2]int64
}

func (plainMethodSpec) DeepCopy() plainMethodSpec              { panic("DeepCopy of a plain spec called") }
func (*plainMethodSpec) DeepCopyInto(*plainMethodSpec)         { panic("DeepCopyInto of a plain spec called") }
func (s plainMethodSpec) Equal(o any) bool                     { return s == o.(plainMethodSpec) }
func (plainMethodSpec) String() string                         { return "plain" }
func (plainMethodSpec) Unused(plainMethodSpec) plainMethodSpec { return plainMethodSpec{} }

type plainDef struct{}

func (plainDef) Definition() typed.Definition {
	return typed.Definition{Type: "Plains.test.resgraph.dev", DefaultNamespace: "default"}
}

type plainRes = typed.Resource[plainMethodSpec, plainDef]

// hookedPlainSpec is a plain-value spec a SpecMethods hook copies.
type hookedPlainSpec struct{ N int }

type hookedDef struct{}

func (hookedDef) Definition() typed.Definition {
	return typed.Definition{Type: "Hooked.test.resgraph.dev", DefaultNamespace: "default"}
}

// embedsPlain embeds a typed resource of a plain spec and copies itself.
type embedsPlain struct{ *plainRes }

func (e embedsPlain) DeepCopy() resource.Resource {
	return embedsPlain{e.plainRes.DeepCopy().(*plainRes)}
}

// TestR2_APlainSpecIsCopiedByAssignment: a plain-value spec is copied by
// assignment, its one deep copy, without calling its copy methods, and
// its resource reports that its copy runs no user code; a spec with
// references, a hooked spec and a type embedding a typed resource do not.
func TestR2_APlainSpecIsCopiedByAssignment(t *testing.T) {
	r := typed.New[plainMethodSpec, plainDef](resource.NewMetadata("default", "Plains.test.resgraph.dev", "p", resource.VersionUndefined),
		plainMethodSpec{N: 1, Name: "a", Pair: [2]int64{2, 3}})
	c := r.DeepCopy().(*plainRes)
	assert.Equal(t, *r.TypedSpec(), *c.TypedSpec())
	assert.True(t, r.Metadata().Equal(*c.Metadata()))
	into := typed.New[plainMethodSpec, plainDef](resource.NewMetadata("default", "Plains.test.resgraph.dev", "q", resource.VersionUndefined), plainMethodSpec{})
	require.True(t, r.CopyInto(into))
	assert.Equal(t, *r.TypedSpec(), *into.TypedSpec())
	assert.True(t, r.CopiesWithoutUserCode(r))

	assert.False(t, r.CopiesWithoutUserCode(c), "another resource")
	assert.False(t, r.CopiesWithoutUserCode(embedsPlain{r}), "a type embedding r may copy itself")
	assert.False(t, r.CopiesWithoutUserCode(nil))

	l := typed.New[linkSpec, linkDef](resource.NewMetadata("network", "Links.net.resgraph.dev", "l", resource.VersionUndefined), linkSpec{MTU: 1})
	assert.False(t, l.CopiesWithoutUserCode(l), "a spec with references and its own DeepCopy")
	n := typed.New[countSpec, countDef](resource.NewMetadata("default", "Counts.test.resgraph.dev", "n", resource.VersionUndefined), countSpec{N: 1})
	assert.True(t, n.CopiesWithoutUserCode(n), "a plain spec without methods")

	hookType := reflect.TypeFor[hookedPlainSpec]()
	copies := 0
	typed.RegisterSpecMethods(func(t reflect.Type) (typed.SpecMethods, bool) {
		if t != hookType {
			return typed.SpecMethods{}, false
		}
		return typed.SpecMethods{
			Copy:  func(s any) any { copies++; return s },
			Equal: func(a, b any) bool { return a == b },
		}, true
	})
	h := typed.New[hookedPlainSpec, hookedDef](resource.NewMetadata("default", "Hooked.test.resgraph.dev", "h", resource.VersionUndefined), hookedPlainSpec{N: 1})
	assert.False(t, h.CopiesWithoutUserCode(h), "a hooked spec is copied by its hook")
	_ = h.DeepCopy()
	assert.Equal(t, 1, copies, "the hook copies a hooked plain spec")
}
