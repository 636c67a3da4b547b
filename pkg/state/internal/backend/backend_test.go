package backend_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSend_DeliversOrGivesUpWhenTheWatchEnds(t *testing.T) {
	ch := make(chan int, 1)
	assert.True(t, backend.Send(context.Background(), ch, 1), "room in the channel")
	assert.Equal(t, 1, <-ch)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, backend.Send(ctx, make(chan int), 2), "nobody receives and the watch ended")
}

func TestPointerOnly_CarriesThePointerAndNoSpec(t *testing.T) {
	ptr := resource.NewPointer("ns", "T", "id")
	r := backend.PointerOnly(ptr)
	assert.Equal(t, resource.PointerOf(ptr), resource.PointerOf(r.Metadata()))
	assert.Nil(t, r.Spec())
	c := r.DeepCopy()
	assert.NotSame(t, r.Metadata(), c.Metadata())
	assert.True(t, resource.Equal(r, c), "the copy is equal")
}

func TestCheckUpdate_VersionIncarnationOwnerPhaseInThatOrder(t *testing.T) {
	stored := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined.Next())
	stored.SetOwner("a")
	md := stored.Copy()
	assert.NoError(t, backend.CheckUpdate(&md, &stored, state.UpdateOptions{Owner: "a"}))

	md.SetVersion(md.Version().Next())
	err := backend.CheckUpdate(&md, &stored, state.UpdateOptions{Owner: "b"})
	assert.True(t, state.IsConflictError(err) && !state.IsOwnerConflictError(err), "version first: %v", err)

	md = stored.Copy()
	err = backend.CheckUpdate(&md, &stored, state.UpdateOptions{Owner: "b"})
	assert.True(t, state.IsOwnerConflictError(err), "%v", err)

	tearingDown := resource.PhaseTearingDown
	err = backend.CheckUpdate(&md, &stored, state.UpdateOptions{Owner: "a", ExpectedPhase: &tearingDown})
	assert.True(t, state.IsPhaseConflictError(err), "%v", err)
}
