package xform

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Config is the part of a transform controller's configuration that
// transform and qtransform check alike.
type Config struct {
	// Name is the controller's name.
	Name string
	// InErr and OutErr are the errors of the input and output types'
	// definitions ([DefinitionOf]).
	InErr, OutErr error
	// In and Out are the input and output kinds.
	In, Out resource.Kind
	// Transform: a TransformFunc is set.
	Transform bool
	// OutputKind is the declared kind of the output type.
	OutputKind controller.OutputKind
	// ExtraOutputs are the extra outputs.
	ExtraOutputs []controller.Output
	// InputFinalizers is the input-finalizer switch.
	InputFinalizers Switch
}

// Invalid returns an error of the invalid class (state.IsInvalidError)
// that names no resource: a misconfiguration. The message names the
// setting at fault.
func Invalid(format string, args ...any) error {
	return state.NewInvalidError(nil, format, args...)
}

// Check returns the first problem of c, an [Invalid] error naming the
// setting at fault, or nil. mapping checks the controller's mapping
// functions, right after the name and the types; more, run after the
// shared checks, checks the controller's own options.
func (c Config) Check(mapping, more func() error) error {
	switch {
	case c.Name == "":
		return Invalid("Settings.Name is empty")
	case c.InErr != nil:
		return Invalid("input type: %w", c.InErr)
	case c.OutErr != nil:
		return Invalid("output type: %w", c.OutErr)
	case c.In.Type() == c.Out.Type():
		return Invalid("input and output have the same type %q", c.Out.Type())
	}
	if err := c.InputFinalizers.Check("WithInputFinalizers", "WithoutInputFinalizers"); err != nil {
		return err
	}
	if err := mapping(); err != nil {
		return err
	}
	switch {
	case !c.Transform:
		return Invalid("Settings.TransformFunc is nil")
	case c.OutputKind != controller.OutputExclusive && c.OutputKind != controller.OutputShared:
		return Invalid("WithOutputKind(%v): neither controller.OutputExclusive nor controller.OutputShared", c.OutputKind)
	}
	if err := c.checkExtraOutputs(); err != nil {
		return err
	}
	return more()
}

func (c Config) checkExtraOutputs() error {
	for i, out := range c.ExtraOutputs {
		switch {
		case out.Type == "":
			return Invalid("WithExtraOutputs: an output with an empty type")
		case out.Type == c.Out.Type():
			return Invalid("WithExtraOutputs: %q is the output type, already declared", out.Type)
		case out.Kind != controller.OutputExclusive && out.Kind != controller.OutputShared:
			return Invalid("WithExtraOutputs: %q has the output kind %v, neither controller.OutputExclusive nor controller.OutputShared", out.Type, out.Kind)
		}
		for _, prev := range c.ExtraOutputs[:i] {
			if prev.Type == out.Type {
				return Invalid("WithExtraOutputs: %q declared twice", out.Type)
			}
		}
	}
	return nil
}
