package state

import (
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
)

// GetOptions configure Get.
type GetOptions struct {
	// ReadOnly asks for the shared snapshot instead of a copy (rule S7).
	ReadOnly bool
	// Revision, when set, receives the revision the read reflects (see
	// [WithGetRevision]).
	Revision *uint64
}

// GetOption configures Get.
type GetOption func(*GetOptions)

// WithReadOnlyGet makes Get return the state's shared, read-only snapshot
// of the resource instead of a private copy, at no copy cost (rule S7).
// The caller must never change it (to change it, DeepCopy it first); a
// state may refuse to Update it.
func WithReadOnlyGet() GetOption {
	return func(o *GetOptions) { o.ReadOnly = true }
}

// ListOptions configure List.
type ListOptions struct {
	// LabelQueries is the union of the label queries, one per
	// [WithLabelQuery] (rule S15); none selects every resource.
	LabelQueries resource.LabelQueries
	IDQuery      resource.IDQuery
	// ReadOnly asks for the shared snapshots instead of copies (rule S7).
	ReadOnly bool
	// Revision, when set, receives the revision the read reflects (see
	// [WithListRevision]).
	Revision *uint64
}

// ListOption configures List.
type ListOption func(*ListOptions)

// Validate returns the invalid-class error of options that a List of kind
// cannot apply — a label query with an unusable term (rule S15: an empty
// key, a numeric operation whose value is not an integer), named with the
// option and the fix — or nil. Every backend, and every layer that answers
// a List itself (the Runtime's cache), checks with it before reading.
func (o *ListOptions) Validate(kind resource.Kind) error {
	if err := o.LabelQueries.Validate(); err != nil {
		return NewInvalidError(nil, "list %s: WithLabelQuery: %w", resource.KindString(kind), err)
	}
	return nil
}

// WithReadOnlyList makes List return the state's shared, read-only
// snapshots instead of private copies, at no copy cost (rule S7). The
// caller must never change them (to change one, DeepCopy it first); the
// List itself (its Items slice) is the caller's.
func WithReadOnlyList() ListOption {
	return func(o *ListOptions) { o.ReadOnly = true }
}

// WithGetRevision makes Get store in *rev the revision R the read
// reflects (see [RevisionReporter]): the resource (or its absence) is the
// one of the state at revision R — every change of its kind with a
// revision up to R is included, and none after it. It is stored whether
// the resource is found or not; 0 when the state does not number its
// changes (and a nil rev is no option).
func WithGetRevision(rev *uint64) GetOption {
	return func(o *GetOptions) { o.Revision = rev }
}

// WithListRevision is [WithGetRevision] for List: the resources listed are
// those of the kind in the state at revision R, stored in *rev.
func WithListRevision(rev *uint64) ListOption {
	return func(o *ListOptions) { o.Revision = rev }
}

// WithLabelQuery restricts List to resources whose labels match the query
// its options build (every term holds). Several WithLabelQuery options on
// one List select the union of their queries (rule S15): a resource is
// listed when it matches at least one. A query with an unusable term (an
// empty key, a numeric operation with a value that is not an integer) is
// refused by List with an invalid-class error; nothing is read.
func WithLabelQuery(opts ...resource.LabelQueryOption) ListOption {
	q := resource.NewLabelQuery(opts...)
	return func(o *ListOptions) { o.LabelQueries = append(o.LabelQueries, q) }
}

// WithIDQuery restricts List to resources whose IDs match.
func WithIDQuery(opts ...resource.IDQueryOption) ListOption {
	return func(o *ListOptions) { opt.Apply(&o.IDQuery, opts) }
}

// CreateOptions configure Create.
type CreateOptions struct {
	Owner resource.Owner
}

// CreateOption configures Create.
type CreateOption func(*CreateOptions)

// WithCreateOwner sets the owner the resource is stored with.
func WithCreateOwner(owner string) CreateOption {
	return func(o *CreateOptions) { o.Owner = owner }
}

// UpdateOptions configure Update (and the helpers built on it).
type UpdateOptions struct {
	// ExpectedPhase is the phase the stored resource must be in; nil means
	// any phase.
	ExpectedPhase *resource.Phase
	Owner         resource.Owner
}

// UpdateOption configures Update.
type UpdateOption func(*UpdateOptions)

// DefaultUpdateOptions returns the defaults: no owner, expected phase
// running.
func DefaultUpdateOptions() UpdateOptions {
	p := resource.PhaseRunning
	return UpdateOptions{ExpectedPhase: &p}
}

// WithUpdateOwner sets the owner the stored resource must have (and, for
// Modify creating a resource, the owner it is created with).
func WithUpdateOwner(owner string) UpdateOption {
	return func(o *UpdateOptions) { o.Owner = owner }
}

// WithExpectedPhase sets the phase the stored resource must be in (the
// default is running; a stored resource in another phase is a phase
// conflict). controller.WithExpectedPhase is the same option for a
// controller's Modify.
func WithExpectedPhase(phase resource.Phase) UpdateOption {
	return func(o *UpdateOptions) {
		p := phase // each options value gets its own copy
		o.ExpectedPhase = &p
	}
}

// WithExpectedPhaseAny accepts the stored resource in any phase.
func WithExpectedPhaseAny() UpdateOption {
	return func(o *UpdateOptions) { o.ExpectedPhase = nil }
}

// DestroyOptions configure Destroy.
type DestroyOptions struct {
	Owner resource.Owner
}

// DestroyOption configures Destroy.
type DestroyOption func(*DestroyOptions)

// WithDestroyOwner sets the owner the destroyed resource must have.
func WithDestroyOwner(owner string) DestroyOption {
	return func(o *DestroyOptions) { o.Owner = owner }
}

// TeardownOptions configure Teardown.
type TeardownOptions struct {
	Owner resource.Owner
}

// TeardownOption configures Teardown.
type TeardownOption func(*TeardownOptions)

// WithTeardownOwner sets the owner the resource must have.
func WithTeardownOwner(owner string) TeardownOption {
	return func(o *TeardownOptions) { o.Owner = owner }
}

// TeardownAndDestroyOptions configure TeardownAndDestroy.
type TeardownAndDestroyOptions struct {
	Owner resource.Owner
}

// TeardownAndDestroyOption configures TeardownAndDestroy.
type TeardownAndDestroyOption func(*TeardownAndDestroyOptions)

// WithTeardownAndDestroyOwner sets the owner the resource must have.
func WithTeardownAndDestroyOwner(owner string) TeardownAndDestroyOption {
	return func(o *TeardownAndDestroyOptions) { o.Owner = owner }
}

// WatchOptions configure Watch.
type WatchOptions struct {
	StartFromBookmark Bookmark
	TailEvents        int
}

// WatchOption configures Watch.
type WatchOption func(*WatchOptions)

// WithTailEvents replays up to the last n changes of the resource first,
// instead of the current-state event (rule S11).
func WithTailEvents(n int) WatchOption {
	return func(o *WatchOptions) { o.TailEvents = n }
}

// WithStartFromBookmark resumes the watch right after the event that carried
// the bookmark (rule S11).
func WithStartFromBookmark(b Bookmark) WatchOption {
	return func(o *WatchOptions) { o.StartFromBookmark = b }
}

// WatchKindOptions configure WatchKind and WatchKindAggregated.
type WatchKindOptions struct {
	// LabelQueries is the union of the label queries, one per
	// [WatchWithLabelQuery] (rule S15); none selects every resource.
	LabelQueries      resource.LabelQueries
	IDQuery           resource.IDQuery
	StartFromBookmark Bookmark
	TailEvents        int
	BootstrapContents bool
}

// WatchKindOption configures WatchKind.
type WatchKindOption func(*WatchKindOptions)

// Validate returns the invalid-class error of a label query with an
// unusable term (rule S15) on a watch of kind, named with the option and
// the fix, or nil; see [ListOptions.Validate].
func (o *WatchKindOptions) Validate(kind resource.Kind) error {
	if err := o.LabelQueries.Validate(); err != nil {
		return NewInvalidError(nil, "watch %s: WatchWithLabelQuery: %w", resource.KindString(kind), err)
	}
	return nil
}

// WithBootstrapContents sends every existing resource as Created, then one
// Bootstrapped event, before the changes (rule S9).
func WithBootstrapContents(enable bool) WatchKindOption {
	return func(o *WatchKindOptions) { o.BootstrapContents = enable }
}

// WithKindTailEvents replays up to the last n changes of the kind first
// (rule S11).
func WithKindTailEvents(n int) WatchKindOption {
	return func(o *WatchKindOptions) { o.TailEvents = n }
}

// WithKindStartFromBookmark resumes the watch right after the event that
// carried the bookmark (rule S11).
func WithKindStartFromBookmark(b Bookmark) WatchKindOption {
	return func(o *WatchKindOptions) { o.StartFromBookmark = b }
}

// WatchWithLabelQuery restricts the watch to resources whose labels match
// the query its options build (every term holds). Several
// WatchWithLabelQuery options on one watch select the union of their
// queries (rule S15), and a resource that stops matching every one of them
// is reported as Destroyed to the watcher, one that starts matching any as
// Created (rule S10). A query with an unusable term is refused by the
// watch call with an invalid-class error.
func WatchWithLabelQuery(opts ...resource.LabelQueryOption) WatchKindOption {
	q := resource.NewLabelQuery(opts...)
	return func(o *WatchKindOptions) { o.LabelQueries = append(o.LabelQueries, q) }
}

// WatchWithIDQuery restricts the watch to resources whose IDs match.
func WatchWithIDQuery(opts ...resource.IDQueryOption) WatchKindOption {
	return func(o *WatchKindOptions) { opt.Apply(&o.IDQuery, opts) }
}

// WatchForCondition is what [State.WatchFor] waits for: every set part must
// hold.
type WatchForCondition struct {
	EventTypes     []EventType
	Phases         []resource.Phase
	Conditions     []func(resource.Resource) (bool, error)
	FinalizerEmpty bool
}

// WatchForConditionFunc adds to a [WatchForCondition].
type WatchForConditionFunc func(*WatchForCondition) error

// WithEventTypes waits for an event of one of the types.
func WithEventTypes(types ...EventType) WatchForConditionFunc {
	return func(c *WatchForCondition) error {
		c.EventTypes = append(c.EventTypes, types...)
		return nil
	}
}

// WithCondition waits until fn returns true (an error from fn ends the wait
// with that error).
func WithCondition(fn func(resource.Resource) (bool, error)) WatchForConditionFunc {
	return func(c *WatchForCondition) error {
		c.Conditions = append(c.Conditions, fn)
		return nil
	}
}

// WithPhases waits until the resource is in one of the phases.
func WithPhases(phases ...resource.Phase) WatchForConditionFunc {
	return func(c *WatchForCondition) error {
		c.Phases = append(c.Phases, phases...)
		return nil
	}
}

// WithFinalizerEmpty waits until the resource has no finalizers.
func WithFinalizerEmpty() WatchForConditionFunc {
	return func(c *WatchForCondition) error {
		c.FinalizerEmpty = true
		return nil
	}
}
