package dependency

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// validateRecord checks what a controller declares on its own (rules C1,
// G2): a name, well-formed inputs of kinds its family may declare,
// destroy-ready inputs only on its own output types, well-formed outputs
// each declared once, and — for QControllers — at least one InputQPrimary
// input. Conflicts with other controllers are checked by [DB.Add]. Every
// error is of the invalid class and reads "register <family> "<name>":
// <what is wrong, and the fix>".
func validateRecord[H any](rec *Record[H]) error {
	if rec.Name == "" {
		return state.NewInvalidError(nil, "register %s: empty name", rec.Family)
	}
	refuse := func(format string, args ...any) error {
		return state.NewInvalidError(nil, "register %s %q: %s", rec.Family, rec.Name, fmt.Sprintf(format, args...))
	}
	outputs := make(map[resource.Type]struct{}, len(rec.Outputs))
	for _, out := range rec.Outputs {
		switch {
		case out.Type == "":
			return refuse("output with empty type")
		case out.Kind != controller.OutputExclusive && out.Kind != controller.OutputShared:
			return refuse("output %q has the output kind %v, neither OutputExclusive nor OutputShared", out.Type, out.Kind)
		}
		if _, dup := outputs[out.Type]; dup {
			return refuse("output %q declared twice", out.Type)
		}
		outputs[out.Type] = struct{}{}
	}
	primary := false
	for _, list := range [][]controller.Input{rec.Static, rec.Dynamic} {
		for _, in := range list {
			if msg := inputProblem(rec.Family, in, outputs); msg != "" {
				return refuse("%s", msg)
			}
			if in.Kind == controller.InputQPrimary {
				primary = true
			}
		}
	}
	if rec.Family == FamilyQController && !primary {
		return refuse("no input of kind InputQPrimary")
	}
	return nil
}

// validateDynamic checks the dynamic inputs a Controller's UpdateInputs
// declares, as validateRecord checks its inputs; the error reads "update
// inputs of <family> "<name>": ...".
func validateDynamic[H any](rec *Record[H], inputs []controller.Input) error {
	outputs := make(map[resource.Type]struct{}, len(rec.Outputs))
	for _, out := range rec.Outputs {
		outputs[out.Type] = struct{}{}
	}
	for _, in := range inputs {
		if msg := inputProblem(rec.Family, in, outputs); msg != "" {
			return state.NewInvalidError(nil, "update inputs of %s %q: %s", rec.Family, rec.Name, msg)
		}
	}
	return nil
}

// inputProblem says what is wrong with one input of a controller of
// family f whose output types are outputs ("" when nothing is): an empty
// namespace or type, an empty ID when one is set, a kind the family may not
// declare (Controllers: InputWeak, InputStrong, InputDestroyReady;
// QControllers: InputQPrimary, InputQMapped, InputQMappedDestroyReady), a
// destroy-ready input (InputDestroyReady, InputQMappedDestroyReady) of a
// type the controller does not output: it delivers only the controller's
// own outputs, so it would never fire.
func inputProblem(f Family, in controller.Input, outputs map[resource.Type]struct{}) string {
	switch {
	case in.Namespace == "" || in.Type == "":
		return fmt.Sprintf("input %q in namespace %q: empty namespace or type", in.Type, in.Namespace)
	case in.ID.IsPresent() && in.ID.ValueOrZero() == "":
		return fmt.Sprintf("input %s(%s): empty ID", in.Type, in.Namespace)
	case !ValidInputKind(f, in.Kind):
		return fmt.Sprintf("input %s(%s): a %s may not declare an input of kind %v (it may: %s)", in.Type, in.Namespace, f, in.Kind, validKinds(f))
	}
	if in.Kind == controller.InputDestroyReady || in.Kind == controller.InputQMappedDestroyReady {
		if _, ok := outputs[in.Type]; !ok {
			return fmt.Sprintf("input %s(%s) of kind %v: the controller does not output %s, and a destroy-ready input "+
				"delivers only the controller's own outputs that are tearing down, so it would never fire; "+
				"declare %s as an output, or use another input kind", in.Type, in.Namespace, in.Kind, in.Type, in.Type)
		}
	}
	return ""
}

// ValidInputKind reports whether a controller of family f may declare an
// input of kind k.
func ValidInputKind(f Family, k controller.InputKind) bool {
	switch f {
	case FamilyController:
		return k == controller.InputWeak || k == controller.InputStrong || k == controller.InputDestroyReady
	case FamilyQController:
		return k == controller.InputQPrimary || k == controller.InputQMapped || k == controller.InputQMappedDestroyReady
	default:
		return false
	}
}

// validKinds names the input kinds a controller of family f may declare.
func validKinds(f Family) string {
	if f == FamilyQController {
		return "InputQPrimary, InputQMapped, InputQMappedDestroyReady"
	}
	return "InputWeak, InputStrong, InputDestroyReady"
}
