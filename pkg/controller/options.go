package controller

import "github.com/resgraph/resgraph/pkg/resource"

// CreateOptions configure [Writer.Create].
type CreateOptions struct {
	// NoOwner creates the resource without an owner.
	NoOwner bool
}

// CreateOption configures [Writer.Create].
type CreateOption func(*CreateOptions)

// WithCreateNoOwner creates the resource without the controller as owner.
func WithCreateNoOwner() CreateOption { return func(o *CreateOptions) { o.NoOwner = true } }

// ModifyOptions configure [Writer.Modify].
type ModifyOptions struct {
	// ExpectedPhase is the phase the stored resource must be in; nil means
	// any. Default: running.
	ExpectedPhase *resource.Phase
	// NoOwner writes the resource without an owner.
	NoOwner bool
}

// ModifyOption configures [Writer.Modify].
type ModifyOption func(*ModifyOptions)

// DefaultModifyOptions returns the defaults: expected phase running, owned.
func DefaultModifyOptions() ModifyOptions {
	p := resource.PhaseRunning
	return ModifyOptions{ExpectedPhase: &p}
}

// WithExpectedPhase sets the phase the stored resource must be in (the
// default is running): state.WithExpectedPhase for a controller's Modify,
// one concept on two option types; the runtime passes it to the state.
func WithExpectedPhase(phase resource.Phase) ModifyOption {
	return func(o *ModifyOptions) {
		p := phase // each options value gets its own copy
		o.ExpectedPhase = &p
	}
}

// WithExpectedPhaseAny accepts the stored resource in any phase
// (state.WithExpectedPhaseAny for a controller's Modify).
func WithExpectedPhaseAny() ModifyOption { return func(o *ModifyOptions) { o.ExpectedPhase = nil } }

// WithModifyNoOwner writes the resource without the controller as owner.
func WithModifyNoOwner() ModifyOption { return func(o *ModifyOptions) { o.NoOwner = true } }

// RemoveOptions configure [Writer.Teardown] and [Writer.Destroy].
type RemoveOptions struct {
	// Owner, when set, is the owner the resource must have instead of the
	// controller's name.
	Owner *resource.Owner
}

// RemoveOption configures [Writer.Teardown] and [Writer.Destroy]: the two
// halves of removing a resource.
type RemoveOption func(*RemoveOptions)

// DeleteOption is the contract's name of [RemoveOption] (there is no
// Delete: it configures Teardown and Destroy).
//
// Deprecated: use RemoveOption.
type DeleteOption = RemoveOption

// WithOwner tears down or destroys a resource owned by owner (which may be
// "" for a resource without owner) instead of one owned by the controller.
func WithOwner(owner string) RemoveOption { return func(o *RemoveOptions) { o.Owner = &owner } }
