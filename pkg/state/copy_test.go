package state_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// checked is a resource.CopyChecker that counts the calls of CopyError;
// its DeepCopy panics exactly when CopyError has a reason (the contract).
type checked struct {
	md     resource.Metadata
	reason error
	calls  *int
}

func (c *checked) Metadata() *resource.Metadata { return &c.md }
func (c *checked) Spec() any                    { return nil }

func (c *checked) DeepCopy() resource.Resource {
	if c.reason != nil {
		panic(c.reason)
	}
	cp := *c
	cp.md = c.md.Copy()
	return &cp
}

func (c *checked) CopyError() error {
	*c.calls++
	return c.reason
}

// TestDeepCopyOfAsksCopyErrorOnlyOnFailure: DeepCopyOf of a CopyChecker
// whose copy succeeds does not call CopyError (a call per copy, on every
// copying read and write); one whose DeepCopy panics gets the invalid
// error that wraps its CopyError, naming the resource.
func TestDeepCopyOfAsksCopyErrorOnlyOnFailure(t *testing.T) {
	calls := 0
	md := resource.NewMetadata("default", "Checked.test.resgraph.dev", "a", resource.VersionUndefined)
	ok := &checked{md: md, calls: &calls}
	c, err := state.DeepCopyOf(ok)
	require.NoError(t, err)
	assert.NotSame(t, ok, c)
	assert.Zero(t, calls, "CopyError calls of a copy that succeeded")

	reason := errors.New("holds a channel")
	bad := &checked{md: md, reason: reason, calls: &calls}
	c, err = state.DeepCopyOf(bad)
	assert.Nil(t, c)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorIs(t, err, reason)
	assert.Equal(t, "resource Checked.test.resgraph.dev(default/a): holds a channel", err.Error())
	assert.Equal(t, 1, calls)
}
