package generic

import (
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// ResourceWithDefinition is the contract's name, in this package, of
// [typed.ResourceWithDefinition] (the same type).
//
// Deprecated: use typed.ResourceWithDefinition.
type ResourceWithDefinition = typed.ResourceWithDefinition

// NamedController implements the Name method of a controller. Embed it to
// give a controller its name.
type NamedController struct {
	// ControllerName is the controller's name: unique in a Runtime, the
	// owner of everything the controller writes and the name of its
	// finalizers.
	ControllerName string
}

// Name returns ControllerName.
func (c NamedController) Name() string { return c.ControllerName }
