package leadership

import (
	"context"
	"time"
)

// TermInfo is what a controller can know of the term it runs under.
type TermInfo struct {
	// Election is the election's name: runtime.RuntimeElection with
	// runtime.LeadPerRuntime, the controller's name with
	// runtime.LeadPerController.
	Election string
	// Number is the term's [Term.Number]: the terms of an election have
	// increasing numbers, in the order they began (on etcd, the create
	// revision of the leader's election key).
	Number uint64
	// Since is when this replica became the leader ([Term.Since]).
	Since time.Time
}

// termKey is the context key of a [TermInfo].
type termKey struct{}

// NewContext returns a copy of ctx that carries t: the Runtime derives the
// context of a controller that leads its election this way, and a test can
// hand a controller the context of a term without an elector.
func NewContext(ctx context.Context, t TermInfo) context.Context {
	return context.WithValue(ctx, termKey{}, t)
}

// FromContext returns the term the code given ctx runs under, and whether
// it runs under one. Under runtime.WithLeadership, the context the Runtime
// passes to a Controller's Run, and to a QController's Reconcile and
// MapInput, carries the term of the controller's election while this
// replica leads it (a standby runs nothing); a new term (after the
// leadership was lost or handed over, and won again) starts the
// controller again with a context that carries the new one. Without
// leadership, ok is false.
func FromContext(ctx context.Context) (t TermInfo, ok bool) {
	t, ok = ctx.Value(termKey{}).(TermInfo)
	return t, ok
}
