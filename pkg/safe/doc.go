// Package safe provides typed (generic) helpers over [state.State],
// [controller.Reader] and [controller.Writer], so that code working with a
// known resource type never type-asserts by hand.
//
// Every helper converts the resources it reads with a checked type
// assertion: a resource of another Go type is reported as an invalid-class
// error ([state.IsInvalidError]) that wraps [ErrTypeMismatch] and names the
// resource, never as a panic; the generic controllers report the same
// mistake with the same error. Helpers
// that take a modify function hand it the typed resource; when the
// resource read is not of the expected type the function is not called
// and nothing is written.
//
// A nil state, reader or writer (or an interface holding a nil pointer) is
// an invalid-class error ([state.IsInvalidError]) of the call, never a
// panic; nil options are skipped, as everywhere in resgraph.
//
// Helpers whose name ends in All learn the kind to read from the type
// parameter: T must provide Definition() (as [typed.Resource] does, even on
// a nil pointer), and the kind is the definition's type in its default
// namespace.
//
// The rules cited here are stated in docs/resources-and-state.md in the repository.
package safe
