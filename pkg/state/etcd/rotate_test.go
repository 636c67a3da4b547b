package etcd_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// TestP3_RotationIsSilentForWatchers: Rotate rewrites every record with
// the new key while a state that shares the sealer watches the kind; the
// watcher gets no event of it (the next event is the next write's), the
// state writes with the new key at once, and a state with the new key
// alone reads everything.
func TestP3_RotationIsSilentForWatchers(t *testing.T) {
	const n = 30
	prefix := newPrefix()
	k1, k2 := newKey("k1"), newKey("k2")
	keys := []atrest.Key{k1}
	s := sealer(t, atrest.Config{CompressAbove: 16}, &keys)
	st := newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(s))
	writeInts(t, st, n)
	ctx := sealedCtx(t)
	ch := make(chan state.Event, 4*n)
	require.NoError(t, st.WatchKind(ctx, resource.NewKind("sealed", conformance.IntResourceType), ch, state.WithBootstrapContents(true)))
	for range n + 1 {
		<-ch // the contents, then Bootstrapped
	}
	keys = []atrest.Key{k2, k1}
	require.NoError(t, etcd.Rotate(ctx, client, etcd.WithPrefix(prefix), etcd.WithSealer(s), etcd.WithRotationBatch(7)))
	assert.Equal(t, map[string]int{"k2": n}, keyIDs(t, prefix))

	require.NoError(t, st.Create(ctx, conformance.NewIntResource("sealed", fmt.Sprintf("r%d", n), secret(n))))
	ev := <-ch
	require.Equal(t, state.Created, ev.Type, "the first event after the rotation is the next write's: %v", ev)
	assert.Equal(t, fmt.Sprintf("r%d", n), ev.Resource.Metadata().ID())
	assert.Equal(t, map[string]int{"k2": n + 1}, keyIDs(t, prefix), "the state writes with the new key")

	alone := []atrest.Key{k2}
	checkInts(t, newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(sealer(t, atrest.Config{}, &alone))), n+1)
}

// TestP3_InterruptedRotationResumedByTheNextRotate: a rotation stopped
// after its first rewrite leaves records under both keys, all readable;
// Rotate again completes it.
func TestP3_InterruptedRotationResumedByTheNextRotate(t *testing.T) {
	const n = 40
	prefix := newPrefix()
	k1, k2 := newKey("k1"), newKey("k2")
	keys := []atrest.Key{k1}
	s := sealer(t, atrest.Config{}, &keys)
	writeInts(t, newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(s)), n)

	ctx, cancel := context.WithCancel(sealedCtx(t))
	defer cancel()
	wch := client.Watch(ctx, prefix, clientv3.WithPrefix())
	go func() {
		<-wch // the first rewrite
		cancel()
	}()
	keys = []atrest.Key{k2, k1}
	err := etcd.Rotate(ctx, client, etcd.WithPrefix(prefix), etcd.WithSealer(s), etcd.WithRotationBatch(1))
	require.ErrorIs(t, err, context.Canceled)
	mixed := keyIDs(t, prefix)
	assert.Positive(t, mixed["k1"], "stopped before the end: %v", mixed)
	checkInts(t, newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(sealer(t, atrest.Config{}, &keys))), n)

	require.NoError(t, etcd.Rotate(sealedCtx(t), client, etcd.WithPrefix(prefix), etcd.WithSealer(s)))
	assert.Equal(t, map[string]int{"k2": n}, keyIDs(t, prefix))
}

// TestP3_RotationWithoutANewKeyOrWithAWrongOneRefused: every record under
// the first key (ErrNoNewKey), a list with another key under a known ID
// (ErrWrongKey), and no sealer (ErrNoKeys) are refused, nothing written.
func TestP3_RotationWithoutANewKeyOrWithAWrongOneRefused(t *testing.T) {
	prefix := newPrefix()
	keys := []atrest.Key{newKey("k1")}
	s := sealer(t, atrest.Config{}, &keys)
	writeInts(t, newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(s)), 3)
	ctx := sealedCtx(t)
	err := etcd.Rotate(ctx, client, etcd.WithPrefix(prefix), etcd.WithSealer(s))
	require.ErrorIs(t, err, atrest.ErrNoNewKey)
	assert.ErrorContains(t, err, `"k1"`)

	wrong := []atrest.Key{newKey("k2"), newKey("k1")}
	err = etcd.Rotate(ctx, client, etcd.WithPrefix(prefix), etcd.WithSealer(sealer(t, atrest.Config{}, &wrong)))
	require.ErrorIs(t, err, atrest.ErrWrongKey)
	assert.Equal(t, map[string]int{"k1": 3}, keyIDs(t, prefix))

	assert.ErrorIs(t, etcd.Rotate(ctx, client, etcd.WithPrefix(prefix)), atrest.ErrNoKeys)
}
