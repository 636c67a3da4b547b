package state

import (
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TypeValidator is an optional interface of a [State] (and of a
// [CoreState]) that can store only some resource types: a state that keeps
// resources outside the process's memory (a file, a server) stores the
// types its codec knows how to encode. ValidateType returns nil when the
// state can store resources of kind, and otherwise an error of the
// invalid class that names the type and the fix (typically: register the
// type in the codec registry given to the state). It does no I/O and is
// safe for concurrent use.
//
// The Runtime asks it for every input and output kind of a controller at
// registration, so that a type the state cannot persist is refused before
// anything runs rather than at its first write. A state that does not
// implement it stores every type. A state returned by [WrapCore]
// implements it: it refuses a nil kind or one with an empty namespace or
// type, then asks its core, and accepts the kind when the core does not
// implement the interface. Use [ValidateType] to ask any state.
type TypeValidator interface {
	ValidateType(kind resource.Kind) error
}

// ValidateType asks st whether it can store resources of kind: the answer
// of its [TypeValidator] when it has one, nil otherwise (a state without
// one stores every type). A nil kind, or one with an empty namespace or
// type, is an invalid-class error either way.
func ValidateType(st CoreState, kind resource.Kind) error {
	if err := resource.ValidateKind(kind); err != nil {
		return NewInvalidError(nil, "%w", err)
	}
	if v, ok := st.(TypeValidator); ok && !usercode.IsNil(st) {
		return v.ValidateType(kind)
	}
	return nil
}

// ValidateType implements [TypeValidator] for a wrapped core (see
// [WrapCore]).
func (w *coreWrapper) ValidateType(kind resource.Kind) error {
	if err := resource.ValidateKind(kind); err != nil {
		return NewInvalidError(nil, "%w", err)
	}
	if v, ok := w.CoreState.(TypeValidator); ok {
		return v.ValidateType(kind)
	}
	return nil
}
