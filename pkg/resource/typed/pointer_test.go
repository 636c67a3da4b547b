package typed_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

type pointerSpec struct{ N int }
type pointerDef struct{}

func (pointerDef) Definition() typed.Definition {
	return typed.Definition{Type: "Pointers.test.resgraph.dev", DefaultNamespace: "ptrs"}
}

type pointerRes = typed.Resource[pointerSpec, pointerDef]

func TestKindAndPointerFromTheTypeParameter(t *testing.T) {
	want := resource.NewKind("ptrs", "Pointers.test.resgraph.dev")
	assert.Equal(t, want, typed.Kind[pointerDef](), "from the definition type")
	assert.Equal(t, want, typed.Kind[*pointerRes](), "from the resource type")

	p := typed.Pointer[*pointerRes]("one")
	assert.Equal(t, resource.NewPointer("ptrs", "Pointers.test.resgraph.dev", "one"), p)
	assert.Equal(t, p, typed.Pointer[pointerDef]("one"))
	r := typed.NewDefault[pointerSpec, pointerDef]("one", pointerSpec{})
	assert.Equal(t, resource.PointerOf(r.Metadata()), p, "comparable with the pointer of a resource built for the same ID")
}
