// Package processed lets a QController of this module tell the Runtime
// which versions of its primary inputs it has fully reconciled, so that
// the Runtime does not queue a change to such a version again (rule Q1,
// extended, in docs/controllers-and-runtime.md). Its types are internal:
// a QController outside this module cannot implement [Source], and
// every change to its primary inputs is queued (rule Q1).
package processed

import "github.com/resgraph/resgraph/pkg/resource"

// Func reports whether the primary input md (a stored snapshot, read
// only), as it is — its creation time and version — was fully reconciled
// by its QController and nothing asked for it to be reconciled again
// since (so that a Reconcile of it now would return at once). It is
// called on the Runtime's routing goroutine, at the same time as the
// controller's Reconcile and MapInput: it must be safe for that, must not
// block on the controller's work and must not call the Runtime. A wrong
// true loses a change; a wrong false only costs a Reconcile.
type Func func(md *resource.Metadata) bool

// Source is implemented by a QController that knows which versions of
// its primary inputs it has reconciled.
type Source interface {
	// ProcessedInputs returns the controller's Func. The Runtime calls it
	// once, when it registers the controller.
	ProcessedInputs() Func
}
