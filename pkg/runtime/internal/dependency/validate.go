package dependency

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/state"
)

// validateRecord checks what a controller declares on its own (rule C1):
// a name, well-formed inputs of kinds its family may declare, well-formed
// outputs each declared once, and — for QControllers — at least one
// InputQPrimary input. Conflicts with other controllers are checked by
// [DB.Add].
func validateRecord[H any](rec *Record[H]) error {
	if rec.Name == "" {
		return state.NewInvalidError(nil, "register %s: empty name", rec.Family)
	}
	primary := false
	for _, list := range [][]controller.Input{rec.Static, rec.Dynamic} {
		for _, in := range list {
			if err := validateInput(rec.Family, rec.Name, in); err != nil {
				return err
			}
			if in.Kind == controller.InputQPrimary {
				primary = true
			}
		}
	}
	if rec.Family == FamilyQController && !primary {
		return state.NewInvalidError(nil, "register %s %q: no input of kind InputQPrimary", rec.Family, rec.Name)
	}
	seen := make(map[string]struct{}, len(rec.Outputs))
	for _, out := range rec.Outputs {
		if out.Type == "" {
			return state.NewInvalidError(nil, "register %s %q: output with empty type", rec.Family, rec.Name)
		}
		if out.Kind != controller.OutputExclusive && out.Kind != controller.OutputShared {
			return state.NewInvalidError(nil, "register %s %q: output %q has invalid kind %d", rec.Family, rec.Name, out.Type, out.Kind)
		}
		if _, dup := seen[out.Type]; dup {
			return state.NewInvalidError(nil, "register %s %q: output %q declared twice", rec.Family, rec.Name, out.Type)
		}
		seen[out.Type] = struct{}{}
	}
	return nil
}

// validateInput checks one input: a non-empty namespace and type, a
// non-empty ID when one is set, and a kind the family may declare
// (Controllers: InputWeak, InputStrong, InputDestroyReady; QControllers:
// InputQPrimary, InputQMapped, InputQMappedDestroyReady).
func validateInput(f Family, name string, in controller.Input) error {
	if in.Namespace == "" || in.Type == "" {
		return state.NewInvalidError(nil, "%s %q: input %q in namespace %q: empty namespace or type", f, name, in.Type, in.Namespace)
	}
	if id, ok := in.ID.Get(); ok && id == "" {
		return state.NewInvalidError(nil, "%s %q: input %s(%s): empty ID", f, name, in.Type, in.Namespace)
	}
	if !ValidInputKind(f, in.Kind) {
		return state.NewInvalidError(nil, "%s %q: input %s(%s): invalid input kind %d for a %s", f, name, in.Type, in.Namespace, in.Kind, f)
	}
	return nil
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
