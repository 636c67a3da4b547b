package conformance

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// hostileOutcome is what a State must do with a hostile input.
type hostileOutcome int

const (
	// refused: an invalid-class error (the input is a bad argument the
	// State can check), nothing written, no panic.
	refused hostileOutcome = iota
	// survived: the caller's own code panicked or failed inside the call;
	// the call may return an error or let the panic reach the caller (or,
	// where the hostile code was not needed, succeed), but nothing is
	// written and the State keeps working (no lock left held, no goroutine
	// of its own crashed).
	survived
)

// hostileInput is one hostile call to a State.
type hostileInput struct {
	name string
	call func() error
	want hostileOutcome
}

// callRecovering runs call and returns the value it panicked with (nil if
// none) and its error.
func callRecovering(call func() error) (panicked any, err error) {
	defer func() { panicked = recover() }()
	return nil, call()
}

// hostileStateInputs are the hostile calls of TestHostile_BadInputIsRefusedOrSurvived,
// on a state holding the IntResource "a" of the test's namespace.
func (s *StateSuite) hostileStateInputs() []hostileInput {
	ctx, st := s.ctx, s.State
	ns := s.ns
	var nilInt *IntResource
	var nilMD *resource.Metadata
	noop := func(resource.Resource) error { return nil }
	existing := func(mode hostileMode) *hostileResource {
		r := newHostile(ns, "a", mode)
		r.md.SetVersion(resource.NewVersion(1))
		return r
	}
	var in []hostileInput
	add := func(want hostileOutcome, name string, call func() error) {
		in = append(in, hostileInput{name: name, call: call, want: want})
	}

	// Bad arguments: refused with an invalid-class error.
	add(refused, "Create(nil)", func() error { return st.Create(ctx, nil) })
	add(refused, "Create(typed-nil resource)", func() error { return st.Create(ctx, nilInt) })
	for _, mode := range []hostileMode{metadataNil, deepCopyPanics, deepCopyNil, deepCopyTypedNil, deepCopyOtherIdentity} {
		add(refused, "Create(resource whose "+mode.String()+")", func() error { return st.Create(ctx, newHostile(ns, "h", mode)) })
		add(refused, "Update(resource whose "+mode.String()+")", func() error { return st.Update(ctx, existing(mode)) })
	}
	add(refused, "Create(empty ID)", func() error { return st.Create(ctx, NewIntResource(ns, "", 1)) })
	add(refused, "Update(nil)", func() error { return st.Update(ctx, nil) })
	add(refused, "Update(typed-nil resource)", func() error { return st.Update(ctx, nilInt) })
	add(refused, "Get(nil)", func() error { _, err := st.Get(ctx, nil); return err })
	add(refused, "Get(typed-nil pointer)", func() error { _, err := st.Get(ctx, nilMD); return err })
	add(refused, "Get(empty namespace)", func() error {
		_, err := st.Get(ctx, resource.NewPointer("", IntResourceType, "a"))
		return err
	})
	add(refused, "List(nil kind)", func() error { _, err := st.List(ctx, nil); return err })
	add(refused, "List(typed-nil kind)", func() error { _, err := st.List(ctx, nilMD); return err })
	add(refused, "Destroy(nil)", func() error { return st.Destroy(ctx, nil) })
	add(refused, "Destroy(typed-nil pointer)", func() error { return st.Destroy(ctx, nilMD) })
	add(refused, "Watch(nil pointer)", func() error { return st.Watch(ctx, nil, make(chan state.Event, 1)) })
	add(refused, "Watch(nil channel)", func() error { return st.Watch(ctx, s.ptr("a"), nil) })
	add(refused, "WatchKind(nil kind)", func() error { return st.WatchKind(ctx, nil, make(chan state.Event, 1)) })
	add(refused, "WatchKind(nil channel)", func() error { return st.WatchKind(ctx, s.kind(), nil) })
	add(refused, "WatchKindAggregated(nil channel)", func() error { return st.WatchKindAggregated(ctx, s.kind(), nil) })
	add(refused, "UpdateWithConflicts(nil pointer)", func() error {
		_, err := st.UpdateWithConflicts(ctx, nil, noop)
		return err
	})
	add(refused, "UpdateWithConflicts(nil updater)", func() error {
		_, err := st.UpdateWithConflicts(ctx, s.ptr("a"), nil)
		return err
	})
	add(refused, "Modify(nil resource)", func() error { return st.Modify(ctx, nil, noop) })
	add(refused, "Modify(typed-nil resource)", func() error { return st.Modify(ctx, nilInt, noop) })
	add(refused, "Modify(resource whose Metadata returns nil)", func() error { return st.Modify(ctx, newHostile(ns, "a", metadataNil), noop) })
	add(refused, "Modify(nil function)", func() error { return st.Modify(ctx, s.intRes("a", 0), nil) })
	add(refused, "ModifyWithResult(nil function)", func() error {
		_, err := st.ModifyWithResult(ctx, s.intRes("a", 0), nil)
		return err
	})
	add(refused, "Teardown(nil)", func() error { _, err := st.Teardown(ctx, nil); return err })
	add(refused, "TeardownAndDestroy(typed-nil pointer)", func() error { return st.TeardownAndDestroy(ctx, nilMD) })
	add(refused, "AddFinalizer(nil pointer)", func() error { return st.AddFinalizer(ctx, nil, "f") })
	add(refused, "AddFinalizer(empty finalizer)", func() error { return st.AddFinalizer(ctx, s.ptr("a"), "") })
	add(refused, "RemoveFinalizer(typed-nil pointer)", func() error { return st.RemoveFinalizer(ctx, nilMD, "f") })
	add(refused, "ContextWithTeardown(nil)", func() error { _, err := st.ContextWithTeardown(ctx, nil); return err })
	add(refused, "WatchFor(nil pointer)", func() error { _, err := st.WatchFor(ctx, nil); return err })
	add(refused, "WatchFor(WithCondition(nil))", func() error {
		_, err := st.WatchFor(ctx, s.ptr("a"), state.WithCondition(nil))
		return err
	})
	// A WatchFor condition is what the call waits for, not an option: a
	// nil one is a missing argument (issue 27), whatever its position.
	add(refused, "WatchFor(nil condition)", func() error { _, err := st.WatchFor(ctx, s.ptr("a"), nil); return err })
	add(refused, "WatchFor(condition, nil condition)", func() error {
		_, err := st.WatchFor(ctx, s.ptr("a"), state.WithPhases(resource.PhaseRunning), nil)
		return err
	})
	add(refused, "WatchFor(typed-nil pointer)", func() error { _, err := st.WatchFor(ctx, nilMD); return err })
	add(refused, "Watch(typed-nil pointer)", func() error { return st.Watch(ctx, nilMD, make(chan state.Event, 1)) })
	add(refused, "WatchKind(typed-nil kind)", func() error { return st.WatchKind(ctx, nilMD, make(chan state.Event, 1)) })
	add(refused, "WatchKindAggregated(nil kind)", func() error { return st.WatchKindAggregated(ctx, nil, make(chan []state.Event, 1)) })
	add(refused, "UpdateWithConflicts(typed-nil pointer)", func() error {
		_, err := st.UpdateWithConflicts(ctx, nilMD, noop)
		return err
	})
	add(refused, "ModifyWithResult(nil resource)", func() error {
		_, err := st.ModifyWithResult(ctx, nil, noop)
		return err
	})
	add(refused, "ModifyWithResult(typed-nil resource)", func() error {
		_, err := st.ModifyWithResult(ctx, nilInt, noop)
		return err
	})
	add(refused, "Teardown(typed-nil pointer)", func() error { _, err := st.Teardown(ctx, nilMD); return err })
	add(refused, "TeardownAndDestroy(nil)", func() error { return st.TeardownAndDestroy(ctx, nil) })
	add(refused, "AddFinalizer(typed-nil pointer)", func() error { return st.AddFinalizer(ctx, nilMD, "f") })
	add(refused, "RemoveFinalizer(nil pointer)", func() error { return st.RemoveFinalizer(ctx, nil, "f") })
	add(refused, "RemoveFinalizer(empty finalizer)", func() error { return st.RemoveFinalizer(ctx, s.ptr("a"), "") })
	add(refused, "ContextWithTeardown(typed-nil pointer)", func() error { _, err := st.ContextWithTeardown(ctx, nilMD); return err })

	// The caller's own code misbehaving inside a call: the call fails (or
	// the panic reaches the caller), the State is unharmed.
	add(survived, "Create(resource whose Metadata panics)", func() error { return st.Create(ctx, newHostile(ns, "h", metadataPanics)) })
	add(survived, "Update(resource whose Metadata panics)", func() error { return st.Update(ctx, existing(metadataPanics)) })
	add(survived, "Modify(function that panics)", func() error {
		return st.Modify(ctx, s.intRes("a", 0), func(resource.Resource) error { panic("hostile modify function") })
	})
	add(survived, "Modify(function returning a typed-nil error)", func() error {
		return st.Modify(ctx, s.intRes("a", 0), func(r resource.Resource) error {
			r.(*IntResource).TypedSpec().Value = 99
			var e *nilError
			return e
		})
	})
	add(survived, "Modify(function returning an error whose Error panics)", func() error {
		return st.Modify(ctx, s.intRes("a", 0), func(resource.Resource) error { return hostileError{} })
	})
	add(survived, "UpdateWithConflicts(updater that panics)", func() error {
		_, err := st.UpdateWithConflicts(ctx, s.ptr("a"), func(resource.Resource) error { panic("hostile updater") })
		return err
	})
	add(survived, "Modify(stored resource whose spec's Equal panics)", func() error {
		r := typed.New[panickyEqualSpec, IntResourceDefinition](resource.NewMetadata(ns, IntResourceType, "e", resource.VersionUndefined), panickyEqualSpec{})
		if err := st.Create(ctx, r); err != nil {
			return err // a State may refuse the type (a codec that does not know it)
		}
		defer func() { _ = st.Destroy(ctx, s.ptr("e")) }()
		return st.Modify(ctx, r, func(r resource.Resource) error {
			r.(*typed.Resource[panickyEqualSpec, IntResourceDefinition]).TypedSpec().Value++
			return nil
		})
	})
	add(survived, "WatchFor(condition that panics)", func() error {
		_, err := st.WatchFor(ctx, s.ptr("a"), state.WithCondition(func(resource.Resource) (bool, error) { panic("hostile condition") }))
		return err
	})
	return in
}

// TestHostile_BadInputIsRefusedOrSurvived: a table of hostile inputs
// (typed nils, nil arguments, resources whose Metadata or DeepCopy
// misbehave, caller functions that panic or return hostile errors): a bad
// argument is refused with an invalid-class error; the caller's own code
// misbehaving inside a call fails that call only. Either way nothing is
// written and the State keeps working — every later write of the same kind
// goes through, so no lock was left held.
func (s *StateSuite) TestHostile_BadInputIsRefusedOrSurvived() {
	s.create("a", 1)
	before := s.listVersions()
	inputs := s.hostileStateInputs()
	for i, in := range inputs {
		panicked, err := callRecovering(in.call)
		if in.want == refused {
			s.Nil(panicked, "%s: panicked", in.name)
			s.True(state.IsInvalidError(err), "%s: want an invalid-class error, got %v", in.name, describe(err))
		}
		s.Equal(before, s.listVersions(), "%s: nothing may be written", in.name)
		s.checkUsable(fmt.Sprintf("probe-%d", i), in.name)
	}
	s.T().Logf("%d hostile inputs", len(inputs))
}

// describe formats an error that may be hostile itself.
func describe(err error) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("%T (Error panics)", err)
		}
	}()
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// checkUsable checks that the State still serves reads and writes of the
// test's kind (create, update, destroy a probe resource) before the test's
// deadline: a lock left held by a hostile input would block them.
func (s *StateSuite) checkUsable(id resource.ID, after string) {
	s.T().Helper()
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			r := s.intRes(id, 1)
			if err := s.State.Create(s.ctx, r); err != nil {
				return err
			}
			r.TypedSpec().Value = 2
			if err := s.State.Update(s.ctx, r); err != nil {
				return err
			}
			if _, err := s.State.Get(s.ctx, s.ptr(id)); err != nil {
				return err
			}
			return s.State.Destroy(s.ctx, s.ptr(id))
		}()
	}()
	select {
	case err := <-done:
		s.Require().NoError(err, "after %s: the State no longer works", after)
	case <-s.ctx.Done():
		s.FailNow("the State is wedged", "after %s: a write of the kind never returned", after)
	}
}

// TestHostile_NilOptionsAreSkipped: a nil option is no option, for every
// option-taking method of State and for the option constructors that take
// options themselves (the state package doc's rule).
func (s *StateSuite) TestHostile_NilOptionsAreSkipped() {
	ctx, st := s.ctx, s.State
	calls := []struct {
		name string
		call func() error
	}{
		{"Create", func() error { return st.Create(ctx, s.intRes("a", 1), nil) }},
		{"Get", func() error { _, err := st.Get(ctx, s.ptr("a"), nil); return err }},
		{"List", func() error { _, err := st.List(ctx, s.kind(), nil); return err }},
		{"List(WithLabelQuery(nil), WithIDQuery(nil))", func() error {
			l, err := st.List(ctx, s.kind(), state.WithLabelQuery(nil), state.WithIDQuery(nil))
			if err == nil && len(l.Items) != 1 {
				err = fmt.Errorf("listed %d resources, want 1", len(l.Items))
			}
			return err
		}},
		{"Update", func() error {
			r := s.get("a")
			r.TypedSpec().Value = 2
			return st.Update(ctx, r, nil)
		}},
		{"UpdateWithConflicts", func() error {
			_, err := st.UpdateWithConflicts(ctx, s.ptr("a"), func(r resource.Resource) error {
				r.(*IntResource).TypedSpec().Value = 3
				return nil
			}, nil)
			return err
		}},
		{"Modify", func() error {
			return st.Modify(ctx, s.intRes("a", 0), func(resource.Resource) error { return nil }, nil)
		}},
		{"ModifyWithResult", func() error {
			_, err := st.ModifyWithResult(ctx, s.intRes("a", 0), func(resource.Resource) error { return nil }, nil)
			return err
		}},
		{"Watch", func() error { return st.Watch(ctx, s.ptr("a"), make(chan state.Event, 8), nil) }},
		{"WatchKind(WatchWithLabelQuery(nil), WatchWithIDQuery(nil))", func() error {
			return st.WatchKind(ctx, s.kind(), make(chan state.Event, 8), nil, state.WatchWithLabelQuery(nil), state.WatchWithIDQuery(nil))
		}},
		{"WatchKindAggregated", func() error {
			return st.WatchKindAggregated(ctx, s.kind(), make(chan []state.Event, 8), nil)
		}},
		{"Teardown", func() error { _, err := st.Teardown(ctx, s.ptr("a"), nil); return err }},
		{"TeardownAndDestroy", func() error { return st.TeardownAndDestroy(ctx, s.ptr("a"), nil) }},
		{"Create again, Destroy", func() error {
			if err := st.Create(ctx, s.intRes("b", 1)); err != nil {
				return err
			}
			return st.Destroy(ctx, s.ptr("b"), nil)
		}},
	}
	for _, c := range calls {
		panicked, err := callRecovering(c.call)
		s.Nil(panicked, "%s with a nil option panicked", c.name)
		s.NoError(err, "%s with a nil option", c.name)
	}
	s.Empty(s.listVersions(), "a was torn down and destroyed, b destroyed")
	s.T().Logf("%d calls with nil options", len(calls))
}
