package generic

import (
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// ResourceWithDefinition is [typed.ResourceWithDefinition], the constraint
// of every generic controller's type parameters: a resource whose type
// knows its definition, even on its zero value (a nil pointer).
type ResourceWithDefinition = typed.ResourceWithDefinition

// NamedController implements the Name method of a controller. Embed it to
// give a controller its name.
type NamedController struct {
	// ControllerName is the controller's name: unique in an engine, the
	// owner of everything the controller writes and the name of its
	// finalizers.
	ControllerName string
}

// Name returns ControllerName.
func (c NamedController) Name() string { return c.ControllerName }
