package etcd_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// TestNew_UnreachableEtcd: New fails within its connect timeout, with an
// error naming the endpoint, when nothing listens there.
func TestNew_UnreachableEtcd(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens on addr now
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer cli.Close()

	_, err = etcd.New(context.Background(), cli, registry(), etcd.WithConnectTimeout(300*time.Millisecond))
	require.Error(t, err)
	assert.Contains(t, err.Error(), addr, "the error names the endpoint")
	assert.Contains(t, err.Error(), "did not answer within 300ms", "the connect timeout given ended the wait")
}

// TestBadValue_NamedAndSkipped: a value that does not decode is an error
// naming its key for Get; List and watches leave it out and go on with the
// other resources.
func TestBadValue_NamedAndSkipped(t *testing.T) {
	prefix := newPrefix()
	st, err := etcd.New(context.Background(), client, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kind := resource.NewKind("ns", conformance.IntResourceType)
	ch := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, kind, ch, state.WithBootstrapContents(true)))
	require.Equal(t, state.Bootstrapped, (<-ch).Type)

	badKey := prefix + "ns/" + conformance.IntResourceType + "/bad"
	_, err = client.Put(ctx, badKey, "not an encoding")
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("ns", "good", 1)))

	_, err = st.Get(ctx, resource.NewPointer("ns", conformance.IntResourceType, "bad"))
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), badKey), "the error names the key: %v", err)

	list, err := st.List(ctx, kind)
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Equal(t, "good", list.Items[0].Metadata().ID())

	ev := <-ch
	assert.Equal(t, state.Created, ev.Type)
	assert.Equal(t, "good", ev.Resource.Metadata().ID(), "the watch skipped the bad value and goes on")
}

// TestValidateType_NamesTheUnregisteredType: the state answers
// state.TypeValidator from its codec registry, without a write: a type
// the registry knows is accepted, another is refused as invalid with the
// codec's error, which names the type and how to register it.
func TestValidateType_NamesTheUnregisteredType(t *testing.T) {
	st := newState(t)
	v, ok := st.(state.TypeValidator)
	require.True(t, ok)
	assert.NoError(t, v.ValidateType(resource.NewKind("default", conformance.IntResourceType)))
	err := v.ValidateType(resource.NewKind("default", "Unknowns.test.resgraph.dev"))
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.True(t, codec.IsUnknownTypeError(err), "%v", err)
	assert.Contains(t, err.Error(), `"Unknowns.test.resgraph.dev"`)
	assert.Contains(t, err.Error(), "codec.Register")
}
