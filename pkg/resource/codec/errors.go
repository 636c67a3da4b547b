package codec

import (
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
)

// UnknownTypeError reports a resource type that is not registered.
// It belongs to the invalid-input class (see the package documentation).
type UnknownTypeError struct {
	// Type is the resource type that is not registered.
	Type resource.Type
}

// Error names the type and the fix.
func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("codec: resource type %q is not registered: register it in the codec registry the state uses "+
		"(codec.Register[Spec, Definition](reg) for a typed resource, reg.RegisterType for another)", e.Type)
}

// InvalidError marks the error as of the invalid-input class of the state
// package (state.IsInvalidError).
func (*UnknownTypeError) InvalidError() {}

// EncodeError reports a resource that cannot be encoded: a Go type other
// than the one registered for its resource type, or a spec that fails to
// encode. It belongs to the invalid-input class.
type EncodeError struct {
	// Resource is the resource that failed, as "type(namespace/id)".
	Resource string
	// Err says why.
	Err error
}

func (e *EncodeError) Error() string {
	return "codec: encode " + e.Resource + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *EncodeError) Unwrap() error { return e.Err }

// InvalidError marks the error as of the invalid-input class of the state
// package (state.IsInvalidError).
func (*EncodeError) InvalidError() {}

// DecodeError reports bytes that do not decode to a resource: not an
// encoding of this package, corrupted, or with a spec that its type does
// not decode.
type DecodeError struct {
	// Resource is the resource the bytes name, as "type(namespace/id)",
	// when the metadata decoded; empty otherwise.
	Resource string
	// Err says why.
	Err error
}

func (e *DecodeError) Error() string {
	if e.Resource != "" {
		return "codec: decode " + e.Resource + ": " + e.Err.Error()
	}
	return "codec: decode: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// IsUnknownTypeError reports whether err is or wraps an [*UnknownTypeError].
func IsUnknownTypeError(err error) bool {
	var target *UnknownTypeError
	return errors.As(err, &target)
}

// IsDecodeError reports whether err is or wraps a [*DecodeError].
func IsDecodeError(err error) bool {
	var target *DecodeError
	return errors.As(err, &target)
}

// IsEncodeError reports whether err is or wraps an [*EncodeError].
func IsEncodeError(err error) bool {
	var target *EncodeError
	return errors.As(err, &target)
}

// errFormat builds the cause of a DecodeError about the layout.
func errFormat(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}
