package xform

import (
	"fmt"
	"reflect"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// DefinitionOf returns the definition of T, read from T's zero value. A
// definition that panics or has an empty type or namespace is an error, and
// so is a spec type that cannot be deep-copied ([CopyErrorOf]): every read
// the Runtime hands out as a private copy, and every write, would fail.
func DefinitionOf[T typed.ResourceWithDefinition]() (def typed.Definition, err error) {
	var zero T
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("resource type %T: Definition panicked on the zero value: %v", zero, p)
		}
	}()
	def = zero.Definition()
	if def.Type == "" || def.DefaultNamespace == "" {
		return def, fmt.Errorf("resource type %T: definition %+v has an empty type or default namespace", zero, def)
	}
	if err := CopyErrorOf[T](); err != nil {
		return def, fmt.Errorf("resource type %s: %w (give the spec type a DeepCopy method, or change that field)", def.Type, err)
	}
	return def, nil
}

// CopyErrorOf returns why resources of type T cannot be deep-copied (a
// *typed.CopyError), or nil: for a pointer type T whose values implement
// resource.CopyChecker (typed resources do), the CopyError of a new value.
func CopyErrorOf[T resource.Resource]() error {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer {
		return nil
	}
	c, ok := reflect.New(t.Elem()).Interface().(resource.CopyChecker)
	if !ok {
		return nil
	}
	return c.CopyError()
}

// DefinitionKind returns the kind of a definition: its default namespace
// and type.
func DefinitionKind(def typed.Definition) resource.Kind {
	return resource.NewKind(def.DefaultNamespace, def.Type)
}

// KindsOf returns the kinds of a controller's two type parameters (input
// and output, or input and dependent), and the errors of their
// definitions ([DefinitionOf]) for the controller's configuration check.
func KindsOf[I, O typed.ResourceWithDefinition]() (in, out resource.Kind, inErr, outErr error) {
	inDef, inErr := DefinitionOf[I]()
	outDef, outErr := DefinitionOf[O]()
	return DefinitionKind(inDef), DefinitionKind(outDef), inErr, outErr
}

// CheckMapped checks a resource that the user function fn returned while
// mapping from a resource (which the caller names): it must be non-nil, in
// want's kind, with a non-empty ID. The error is of the invalid class. On
// success the mapped resource's version is reset to undefined, so that it
// can serve as the empty resource of a Modify.
func CheckMapped(fn string, mapped resource.Resource, want resource.Kind) error {
	if usercode.IsNil(mapped) || mapped.Metadata() == nil {
		return state.NewInvalidError(nil, "%s returned a nil resource", fn)
	}
	md := mapped.Metadata()
	if md.Type() != want.Type() || md.Namespace() != want.Namespace() {
		return state.NewInvalidError(nil, "%s returned %s, outside the declared kind %s",
			fn, resource.PointerString(md), resource.KindString(want))
	}
	if md.ID() == "" {
		return state.NewInvalidError(nil, "%s returned %s with an empty ID", fn, resource.PointerString(md))
	}
	md.SetVersion(resource.VersionUndefined)
	return nil
}
