package controller

import (
	"context"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// IndexReader is an optional interface of a [Reader] that lists resources
// by a custom index (a key function registered per kind with
// runtime.WithIndex). The Runtime and QRuntime the Runtime hands to
// controllers implement it; use it through safe.ReaderListByIndex, which
// reports a Reader without it as an invalid-class error. A Reader that
// wraps another forwards ListByIndex, or indexes are lost.
type IndexReader interface {
	// ListByIndex returns the resources of kind that the index named index
	// lists under key — those whose index function returned key — and
	// that match opts (label and ID queries, read-only), sorted by ID, with
	// List's access rule (rule C3) and copies (rule S7). It reflects every
	// change a List of the kind would: creations, updates (labels
	// included), destructions, and the controller's own writes. An index
	// that is not registered for kind is an invalid-class error.
	ListByIndex(ctx context.Context, kind resource.Kind, index, key string, opts ...state.ListOption) (resource.List, error)
}
