package remote

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestN1_ErrorClassesCrossTheWire: an error of every class of the state
// package, turned into the status a server sends and back into the
// client's error (through the status's wire form), belongs to the same
// classes and to no other, with the code of its class; a status without
// details keeps its code.
func TestN1_ErrorClassesCrossTheWire(t *testing.T) {
	ptr := resource.NewPointer("ns", "T", "id")
	preds := map[string]func(error) bool{
		"not found": state.IsNotFoundError, "conflict": state.IsConflictError,
		"owner": state.IsOwnerConflictError, "phase": state.IsPhaseConflictError,
		"finalizers": state.IsPendingFinalizersError, "invalid": state.IsInvalidError,
		"fenced": state.IsFencedError, "overrun": state.IsBufferOverrunError,
		"bookmark unknown": IsBookmarkUnknownError,
	}
	for _, tc := range []struct {
		err  error
		code codes.Code
		want []string
	}{
		{state.NewNotFoundError(ptr, "gone"), codes.NotFound, []string{"not found"}},
		{state.NewConflictError(ptr, "version"), codes.Aborted, []string{"conflict"}},
		{state.NewOwnerConflictError(ptr, "owner"), codes.FailedPrecondition, []string{"conflict", "owner"}},
		{state.NewPhaseConflictError(ptr, "phase"), codes.FailedPrecondition, []string{"conflict", "phase"}},
		{state.NewPendingFinalizersError(ptr, "fins"), codes.FailedPrecondition, []string{"conflict", "finalizers"}},
		{state.NewInvalidError(ptr, "bad"), codes.InvalidArgument, []string{"invalid"}},
		{state.NewFencedError(ptr, "term over"), codes.FailedPrecondition, []string{"fenced"}},
		{state.NewBufferOverrunError(ptr, "too old"), codes.OutOfRange, []string{"overrun"}},
		{bookmarkUnknown(errors.New("restarted")), codes.OutOfRange, []string{"overrun", "bookmark unknown"}},
		{fmt.Errorf("wrapped: %w", state.NewOwnerConflictError(ptr, "owner")), codes.FailedPrecondition, []string{"conflict", "owner"}},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			st := toStatus(tc.err)
			assert.Equal(t, tc.code, st.Code())
			wire, err := st.WithDetails() // a copy through the wire form
			assert.NoError(t, err)
			back := fromStatus(status.ErrorProto(wire.Proto()))
			assert.Equal(t, tc.code, status.Code(back))
			assert.Contains(t, back.Error(), tc.err.Error())
			for name, pred := range preds {
				assert.Equal(t, contains(tc.want, name), pred(back), "%s of %v", name, back)
			}
			// An Errored event's error too.
			ev := errorFromPB(errorToPB(tc.err))
			for name, pred := range preds {
				assert.Equal(t, contains(tc.want, name), pred(ev), "event: %s of %v", name, ev)
			}
		})
	}
	// A status of its own (an access-control denial) passes as it is.
	denied := status.Error(codes.PermissionDenied, "denied: uid 1001 may not update Links(network)")
	assert.Equal(t, codes.PermissionDenied, toStatus(fmt.Errorf("filter: %w", denied)).Code())
	back := fromStatus(denied)
	assert.Equal(t, codes.PermissionDenied, status.Code(back))
	for name, pred := range preds {
		assert.False(t, pred(back), name)
	}
	// A status without details: InvalidArgument is invalid.
	assert.True(t, state.IsInvalidError(fromStatus(status.Error(codes.InvalidArgument, "grpc says no"))))
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
