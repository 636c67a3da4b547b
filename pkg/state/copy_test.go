package state_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
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

type plainCopySpec struct{ N int }

type plainCopyDef struct{}

func (plainCopyDef) Definition() typed.Definition {
	return typed.Definition{Type: "PlainCopies.test.resgraph.dev", DefaultNamespace: "default"}
}

type plainCopyRes = typed.Resource[plainCopySpec, plainCopyDef]

// embedsTyped embeds a typed resource of a plain spec; its own DeepCopy
// (user code) panics.
type embedsTyped struct{ *plainCopyRes }

func (embedsTyped) DeepCopy() resource.Resource { panic("the wrapper's DeepCopy") }

// TestR2_OnlyACopyWithoutUserCodeSkipsTheRecover: DeepCopyOf copies a
// typed resource of a plain spec (no user code) as it is; a type that
// embeds one has its own DeepCopy, user code, whose panic is still an
// invalid error, not a crash.
func TestR2_OnlyACopyWithoutUserCodeSkipsTheRecover(t *testing.T) {
	r := typed.New[plainCopySpec, plainCopyDef](resource.NewMetadata("default", "PlainCopies.test.resgraph.dev", "a", resource.VersionUndefined), plainCopySpec{N: 1})
	c, err := state.DeepCopyOf(r)
	require.NoError(t, err)
	assert.NotSame(t, r, c)
	assert.Equal(t, 1, c.(*plainCopyRes).TypedSpec().N)

	c, err = state.DeepCopyOf(embedsTyped{r})
	assert.Nil(t, c)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, "the wrapper's DeepCopy")
}

// claimsPlain is a resource of another package's type that says its copy
// runs no user code, and whose DeepCopy panics all the same.
type claimsPlain struct{ md resource.Metadata }

func (c *claimsPlain) Metadata() *resource.Metadata        { return &c.md }
func (c *claimsPlain) Spec() any                           { return nil }
func (c *claimsPlain) DeepCopy() resource.Resource         { panic("the claim was wrong") }
func (c *claimsPlain) CopiesWithoutUserCode(self any) bool { return true }

// TestR2_OnlyATypedResourceIsCopiedWithoutTheRecover: DeepCopyOf trusts
// the claim of a copy without user code only from package typed (one
// lookup of the type's plan); another type's DeepCopy is user code, and
// its panic is an invalid error, not a crash.
func TestR2_OnlyATypedResourceIsCopiedWithoutTheRecover(t *testing.T) {
	bad := &claimsPlain{md: resource.NewMetadata("default", "Claims.test.resgraph.dev", "a", resource.VersionUndefined)}
	c, err := state.DeepCopyOf(bad)
	assert.Nil(t, c)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, "the claim was wrong")
}

// BenchmarkDeepCopyOf copies a typed resource of a plain spec, the copy a
// state makes of what it returns or is given outside its write path.
func BenchmarkDeepCopyOf(b *testing.B) {
	r := typed.New[plainCopySpec, plainCopyDef](resource.NewMetadata("default", "PlainCopies.test.resgraph.dev", "a", resource.VersionUndefined), plainCopySpec{N: 1})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := state.DeepCopyOf(r); err != nil {
			b.Fatal(err)
		}
	}
}
