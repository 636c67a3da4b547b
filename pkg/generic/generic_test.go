package generic_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

var _ generic.ResourceWithDefinition = (*fixture.A)(nil)

func TestDefinitionWorksOnANilPointer(t *testing.T) {
	var a *fixture.A
	assert.Equal(t, "As.test.resgraph.dev", a.Definition().Type)
}

// TestResourceWithDefinitionIsTyped: generic's constraint is typed's
// (one concept, defined next to typed.Definition), not a second interface.
func TestResourceWithDefinitionIsTyped(t *testing.T) {
	assert.Equal(t, reflect.TypeFor[typed.ResourceWithDefinition](), reflect.TypeFor[generic.ResourceWithDefinition]())
}

func TestNamedControllerNamesTheController(t *testing.T) {
	c := struct{ generic.NamedController }{generic.NamedController{ControllerName: "x"}}
	assert.Equal(t, "x", c.Name())
}

func TestPanicErrorNamesTheFunction(t *testing.T) {
	// The resource is a field; the chain around the error names it once.
	ptr := resource.NewPointer("ns", "T", "id")
	cause := errors.New("cause")
	err := &generic.PanicError{Func: "TransformFunc", Resource: ptr, Value: cause}
	assert.Equal(t, "TransformFunc panicked: cause", err.Error())
	assert.ErrorIs(t, err, cause, "a panic with an error value unwraps to it")
	assert.Equal(t, "MapInput panicked: boom", (&generic.PanicError{Func: "MapInput", Value: "boom"}).Error())
	assert.NoError(t, (&generic.PanicError{Value: "boom"}).Unwrap())
}
