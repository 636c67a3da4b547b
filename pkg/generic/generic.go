package generic

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// ResourceWithDefinition is a resource whose type knows its definition:
// generic controllers call Definition on the zero value of their type
// parameters (a nil pointer for typed resources) to learn the namespace and
// type they work on. [typed.Resource] implements it.
type ResourceWithDefinition interface {
	resource.Resource
	// Definition returns the resource type's definition; it must work on a
	// nil pointer.
	Definition() typed.Definition
}

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
