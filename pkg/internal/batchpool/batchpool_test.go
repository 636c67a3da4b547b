package batchpool

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPool_KeepsEmptiedBatchesUpToItsSize: Put clears a batch (no
// resource stays referenced) and keeps it for Get; a full pool and a batch
// larger than Keep drop what they are given; a nil pool keeps nothing.
func TestPool_KeepsEmptiedBatchesUpToItsSize(t *testing.T) {
	p := New(2)
	assert.Nil(t, p.Get(), "an empty pool")
	b := []state.Event{{Type: state.Created, Bookmark: state.Bookmark("b"), Revision: 3}, {Error: context.Canceled}}
	p.Put(b)
	got := p.Get()
	require.NotNil(t, got)
	assert.Empty(t, got)
	assert.Equal(t, cap(b), cap(got))
	assert.Equal(t, []state.Event{{}, {}}, got[:2], "cleared")

	p.Put(make([]state.Event, 0, Keep+1))
	assert.Nil(t, p.Get(), "larger than Keep: dropped")

	for range 3 {
		p.Put(make([]state.Event, 1))
	}
	assert.NotNil(t, p.Get())
	assert.NotNil(t, p.Get())
	assert.Nil(t, p.Get(), "kept up to the pool's size")

	var none *Pool
	none.Put(make([]state.Event, 1))
	assert.Nil(t, none.Get())
}

// TestFor_OnlyTheBoundChannelGetsThePool: For returns the pool bound to
// the channel given, and nil for any other channel or a context without a
// binding.
func TestFor_OnlyTheBoundChannelGetsThePool(t *testing.T) {
	ch, other := make(chan []state.Event), make(chan []state.Event)
	p := New(1)
	ctx := Bind(context.Background(), ch, p)
	assert.Same(t, p, For(ctx, ch))
	assert.Nil(t, For(ctx, other))
	assert.Nil(t, For(ctx, nil))
	assert.Nil(t, For(context.Background(), ch))
}
