// Package state defines the resource store of resgraph: the [CoreState] and
// [State] interfaces, watch [Event]s, functional options, and error classes
// tested with the Is* predicates ([IsNotFoundError], [IsConflictError], ...),
// which see through wrapping and work for errors of any backend.
//
// [WrapCore] builds every [State] method beyond [CoreState] on top of any
// CoreState, so a backend implements only the core.
//
// The rules every State obeys are numbered S1–S15 in the project's API
// contract; the conformance package checks them against any implementation.
// In short: optimistic concurrency by version (S1, S2), owner and phase
// checks (S2, S3), teardown with finalizers (S4, S5), no-op writes write
// nothing (S6), immutable shared snapshots (S7: writes copy the caller's
// resource once; watch events carry read-only snapshots shared by every
// watcher; Get and List return private copies unless [WithReadOnlyGet] or
// [WithReadOnlyList] asks for the snapshots; Update of a snapshot itself is
// refused — DeepCopy it first, or use Modify, which hands its function a
// private copy), watches that never lose a change
// and never cut a slow reader off (S8–S13), safety for concurrent use
// (S14), and label queries that select the union of their queries (S15).
//
// # Label queries (S15)
//
// S15: several label-query options ([WithLabelQuery] on one List,
// [WatchWithLabelQuery] on one WatchKind) select the union of their
// queries: a resource is selected when it matches at least one of them,
// and it matches a query when every term of that query holds. No label
// query selects every resource, and so does a union that holds an empty
// query (WithLabelQuery()). The ID query, when given, applies to the
// union. S10 holds for unions: a watcher is sent Destroyed when a resource
// stops matching every query of its union, Created when it starts matching
// any, and Updated when it moves from one query to another.
//
// Terms are built by resource.LabelExists, LabelEqual and LabelIn, and by
// the ordering operations resource.LabelLT and LabelLTE (byte-wise string
// order) and LabelLTNumeric and LabelLTENumeric (base-10 64-bit integers);
// resource.NotMatches inverts a term. An ordering term never holds for a
// resource without the key (or, numeric, whose value is not an integer),
// inverted or not, so NotMatches of LabelLTNumeric("n", "5") selects
// "n is an integer >= 5". A term that cannot be evaluated — an empty key,
// a numeric operation whose value is not an integer — makes List and the
// watch calls fail with an invalid-class error that names the option and
// the fix ([ListOptions.Validate], [WatchKindOptions.Validate]); nothing
// is read and no watch starts. Every backend (inmem and its bbolt
// persistence, etcd) and the Runtime's cache evaluate unions the same way:
// conformance.StateSuite's TestS15_* tests, and a fuzz target per backend
// against a reference evaluator (conformance.LabelQueryFuzzer), check it.
//
// # Options and bad arguments
//
// One rule for every option-taking function of resgraph (the State
// methods here and in inmem, the option constructors that take options
// themselves such as [WithLabelQuery], the label and ID query builders,
// the controller runtime's read and write options, the safe helpers, the
// Runtime's and the generic controllers' constructors): a nil option is no
// option, and is skipped. A nil required argument — a nil state, pointer,
// resource, kind, channel or function, a nil WatchFor condition (a
// condition is what WatchFor waits for, not an option), or an interface
// holding a nil pointer — is an invalid-class error of the call ([IsInvalidError]),
// never a panic; nothing is read or written. WrapCore(nil) is a State
// whose every method reports it that way.
//
// Option names follow one pattern: With..., naming the call the option is
// for where one option type would otherwise collide with another's
// (WithReadOnlyGet / WithReadOnlyList, WithCreateOwner / WithUpdateOwner /
// WithDestroyOwner, WithTailEvents / WithKindTailEvents). The two filters
// of WatchKind keep the contract's spelling WatchWithLabelQuery and
// WatchWithIDQuery: they are List's [WithLabelQuery] and [WithIDQuery] for
// a watch. [WithExpectedPhase] and [WithExpectedPhaseAny] are one concept
// with controller.WithExpectedPhase and controller.WithExpectedPhaseAny:
// the phase a write expects the stored resource in (default running), as
// an UpdateOption here and as a controller runtime's ModifyOption there.
//
// # Read-only snapshots (S7)
//
// An event's Resource and Old, and what a read-only Get or List returns,
// are shared by every reader: never change them, not even a slice or map
// of a spec. To change a resource you read, let Modify (or
// UpdateWithConflicts) hand you a private copy:
//
//	err := st.Modify(ctx, ev.Resource, func(r resource.Resource) error {
//		r.Metadata().Labels().Set("seen", "yes") // r is a private copy
//		return nil
//	})
//
// or DeepCopy it and Update the copy:
//
//	c := ev.Resource.DeepCopy()
//	c.Metadata().Labels().Set("seen", "yes")
//	err := st.Update(ctx, c)
//
// Modify never changes the resource it is given, so a snapshot may be
// passed to it as is.
//
// A state freezes every snapshot it shares before anyone else can see it
// (resource.Metadata.Freeze): a frozen metadata is read by any number of
// goroutines, its accessors attaching nothing to it, and its copies share
// its owner, finalizers, labels and annotations until they change them.
// The states of this module do; a State of your own that hands out
// shared snapshots must too.
//
// The rules cited here are stated in docs/resources-and-state.md in the repository.
package state
