package controller

import (
	"cmp"
	"strconv"

	"github.com/siderolabs/gen/optional"

	"github.com/resgraph/resgraph/pkg/resource"
)

// InputKind is how a controller depends on an input (what it reads is the
// Input's namespace and type, a resource.Kind). Its String is the
// constant's name ("InputQPrimary"); an undefined value prints as
// "InputKind(n)".
type InputKind int

const (
	// InputWeak: the controller is woken by every change; it may not touch
	// the input's finalizers.
	InputWeak InputKind = iota
	// InputStrong: like weak, and the controller may add and remove
	// finalizers on it (rule C5).
	InputStrong
	// InputDestroyReady: the input is one of the controller's own outputs,
	// delivered only when tearing down with no finalizers left (rule C9).
	InputDestroyReady
	// InputQPrimary: a QController's queue holds these pointers (rule Q1).
	InputQPrimary
	// InputQMapped: changes go through MapInput (rule Q4).
	InputQMapped
	// InputQMappedDestroyReady: like InputQMapped, for the controller's own
	// outputs that are tearing down with no finalizers (rule Q4).
	InputQMappedDestroyReady
)

// String returns the constant's name, e.g. "InputQPrimary".
func (k InputKind) String() string {
	switch k {
	case InputWeak:
		return "InputWeak"
	case InputStrong:
		return "InputStrong"
	case InputDestroyReady:
		return "InputDestroyReady"
	case InputQPrimary:
		return "InputQPrimary"
	case InputQMapped:
		return "InputQMapped"
	case InputQMappedDestroyReady:
		return "InputQMappedDestroyReady"
	default:
		return "InputKind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Input declares a resource kind (or one resource, when ID is set) that a
// controller reads.
type Input struct {
	Namespace resource.Namespace
	Type      resource.Type
	ID        optional.Optional[resource.ID]
	Kind      InputKind
	// Uncached lets the controller read this input through to the state,
	// bypassing the Runtime's cache ([UncachedReader]); its Get and List
	// still read through the cache. The dependency graph marks the edge
	// (DependencyEdge.Uncached).
	Uncached bool
}

// Compare orders inputs by namespace, type, ID (absent first), kind, and
// cached before uncached.
func (a Input) Compare(b Input) int {
	if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	aid, aok := a.ID.Get()
	bid, bok := b.ID.Get()
	switch {
	case aok && !bok:
		return 1
	case !aok && bok:
		return -1
	}
	if c := cmp.Compare(aid, bid); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	switch {
	case a.Uncached == b.Uncached:
		return 0
	case b.Uncached:
		return -1
	}
	return 1
}

// EqualKeys reports whether a and b name the same resources (namespace,
// type and ID), whatever their kinds.
func (a Input) EqualKeys(b Input) bool {
	return a.Namespace == b.Namespace && a.Type == b.Type && a.ID == b.ID
}

// OutputKind is how a controller owns an output type (whether others may
// write it too), not a resource.Kind. Its String is the constant's name
// ("OutputShared"); an undefined value prints as "OutputKind(n)".
type OutputKind int

const (
	// OutputExclusive: only this controller writes resources of the type.
	OutputExclusive OutputKind = iota
	// OutputShared: several controllers write resources of the type, each
	// its own resources (rule C4).
	OutputShared
)

// String returns the constant's name, e.g. "OutputShared".
func (k OutputKind) String() string {
	switch k {
	case OutputExclusive:
		return "OutputExclusive"
	case OutputShared:
		return "OutputShared"
	default:
		return "OutputKind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Output declares a resource type that a controller writes (in any
// namespace).
type Output struct {
	Type resource.Type
	Kind OutputKind
	// Namespace, when set, is the namespace the controller writes the type
	// in, which the Runtime's checks of who writes what use: an input kind
	// that no controller outputs (DependencyEdge.NoWriter), a type the
	// state cannot store. Empty means any namespace. It does not limit
	// where the controller may write the type.
	Namespace resource.Namespace
}
