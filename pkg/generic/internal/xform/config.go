package xform

import (
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
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
	// MappingErr says what is wrong with the mapping functions, if
	// anything.
	MappingErr error
	// FinalizerRemoval: a FinalizerRemovalFunc is set.
	FinalizerRemoval bool
	// InputFinalizers: the controller holds input finalizers.
	InputFinalizers bool
	// OutputKind is the declared kind of the output type.
	OutputKind controller.OutputKind
	// ExtraOutputs are the extra outputs.
	ExtraOutputs []controller.Output
}

// Check returns the first problem of c, nil if there is none. extraInputs,
// run after the core checks and before the extra outputs are checked,
// checks the controller's own kind of extra inputs.
func (c Config) Check(extraInputs func() error) error {
	switch {
	case c.Name == "":
		return errors.New("empty Name")
	case c.InErr != nil:
		return fmt.Errorf("input type: %w", c.InErr)
	case c.OutErr != nil:
		return fmt.Errorf("output type: %w", c.OutErr)
	case c.MappingErr != nil:
		return c.MappingErr
	case c.FinalizerRemoval && !c.InputFinalizers:
		return errors.New("FinalizerRemovalFunc is set without WithInputFinalizers")
	case c.OutputKind != controller.OutputExclusive && c.OutputKind != controller.OutputShared:
		return fmt.Errorf("unknown output kind %d", c.OutputKind)
	case c.In.Type() == c.Out.Type():
		return fmt.Errorf("input and output have the same type %q", c.Out.Type())
	}
	if err := extraInputs(); err != nil {
		return err
	}
	for _, out := range c.ExtraOutputs {
		if out.Type == c.Out.Type() {
			return fmt.Errorf("extra output %s repeats the output type", out.Type)
		}
	}
	return nil
}
