package state

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
)

// nilCore is the core of WrapCore(nil): every method fails with an
// invalid-class error, so a State built on nothing reports it instead of
// panicking.
type nilCore struct{}

var errNilCore = NewInvalidError(nil, "state.WrapCore: nil core")

func (nilCore) Get(context.Context, resource.Pointer, ...GetOption) (resource.Resource, error) {
	return nil, errNilCore
}

func (nilCore) List(context.Context, resource.Kind, ...ListOption) (resource.List, error) {
	return resource.List{}, errNilCore
}

func (nilCore) Create(context.Context, resource.Resource, ...CreateOption) error { return errNilCore }
func (nilCore) Update(context.Context, resource.Resource, ...UpdateOption) error { return errNilCore }
func (nilCore) Destroy(context.Context, resource.Pointer, ...DestroyOption) error {
	return errNilCore
}

func (nilCore) Watch(context.Context, resource.Pointer, chan<- Event, ...WatchOption) error {
	return errNilCore
}

func (nilCore) WatchKind(context.Context, resource.Kind, chan<- Event, ...WatchKindOption) error {
	return errNilCore
}

func (nilCore) WatchKindAggregated(context.Context, resource.Kind, chan<- []Event, ...WatchKindOption) error {
	return errNilCore
}

// ValidateType implements [TypeValidator]: a nil core stores nothing.
func (nilCore) ValidateType(resource.Kind) error { return errNilCore }
