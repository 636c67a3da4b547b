package etcd_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// newKey returns a random key of ID id.
func newKey(id string) atrest.Key {
	k := atrest.Key{ID: id, Secret: make([]byte, atrest.KeySize)}
	_, _ = rand.Read(k.Secret)
	return k
}

// sealer returns a sealer of cfg whose provider gives *keys at every call.
func sealer(t testing.TB, cfg atrest.Config, keys *[]atrest.Key) *atrest.Sealer {
	t.Helper()
	cfg.Keys = atrest.KeyFunc(func(context.Context) ([]atrest.Key, error) { return *keys, nil })
	s, err := atrest.New(context.Background(), cfg)
	require.NoError(t, err)
	return s
}

// sealedCtx is a test's context.
func sealedCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// secret is a spec value no stored value may show in clear.
func secret(i int) int { return 880_000_000 + i }

// writeInts creates n IntResources r0..r(n-1) holding secret(i).
func writeInts(t *testing.T, st state.State, n int) {
	t.Helper()
	for i := range n {
		require.NoError(t, st.Create(sealedCtx(t), conformance.NewIntResource("sealed", fmt.Sprintf("r%d", i), secret(i))))
	}
}

// checkInts checks that st holds the n IntResources of writeInts.
func checkInts(t *testing.T, st state.State, n int) {
	t.Helper()
	l, err := st.List(sealedCtx(t), resource.NewKind("sealed", conformance.IntResourceType))
	require.NoError(t, err)
	require.Len(t, l.Items, n)
	for _, r := range l.Items {
		var i int
		_, _ = fmt.Sscanf(r.Metadata().ID(), "r%d", &i)
		assert.Equal(t, secret(i), r.(*conformance.IntResource).TypedSpec().Value)
	}
}

// keyIDs counts the records under prefix by key ID, read from etcd.
func keyIDs(t *testing.T, prefix string) map[string]int {
	t.Helper()
	resp, err := client.Get(sealedCtx(t), prefix+"sealed/", clientv3.WithPrefix())
	require.NoError(t, err)
	counts := map[string]int{}
	for _, kv := range resp.Kvs {
		if len(kv.Value) == 0 {
			continue // the kind's head key
		}
		id, err := atrest.KeyID(kv.Value)
		require.NoError(t, err)
		counts[id]++
	}
	return counts
}

// TestSealedStateConformance runs S1–S14 on an etcd state whose records
// are compressed and encrypted.
func TestSealedStateConformance(t *testing.T) {
	keys := []atrest.Key{newKey("k1")}
	s := sealer(t, atrest.Config{CompressAbove: 16}, &keys)
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			return newState(t, etcd.WithHistoryCapacity(conformanceHistory), etcd.WithSealer(s))
		},
		HistoryCapacity: conformanceHistory,
	})
}

// TestP2_NoSpecInClearInEtcd: every value under the prefix is encrypted
// under the writing key and shows no spec.
func TestP2_NoSpecInClearInEtcd(t *testing.T) {
	prefix := newPrefix()
	keys := []atrest.Key{newKey("k1")}
	st := newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(sealer(t, atrest.Config{}, &keys)))
	writeInts(t, st, 20)
	resp, err := client.Get(sealedCtx(t), prefix, clientv3.WithPrefix())
	require.NoError(t, err)
	for _, kv := range resp.Kvs {
		for i := range 20 {
			assert.False(t, bytes.Contains(kv.Value, fmt.Appendf(nil, "%d", secret(i))), "spec in clear under %s", kv.Key)
		}
	}
	assert.Equal(t, map[string]int{"k1": 20}, keyIDs(t, prefix))
	checkInts(t, newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(sealer(t, atrest.Config{}, &keys))), 20)
}

// TestP2_WrongOrMissingKeyRefusedAtNew: New refuses a prefix whose
// records need a key the sealer lacks, or whose key check another key
// under the same ID fails, naming the key ID, in both modes.
func TestP2_WrongOrMissingKeyRefusedAtNew(t *testing.T) {
	prefix := newPrefix()
	keys := []atrest.Key{newKey("k1")}
	writeInts(t, newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(sealer(t, atrest.Config{}, &keys))), 3)
	lenient := atrest.Config{Lenient: true, Report: func(err error) { t.Errorf("nothing to skip: %v", err) }}
	for name, c := range map[string]struct {
		opts []etcd.Option
		want error
	}{
		"wrong key":          {[]etcd.Option{etcd.WithSealer(sealer(t, atrest.Config{}, &[]atrest.Key{newKey("k1")}))}, atrest.ErrWrongKey},
		"wrong key, lenient": {[]etcd.Option{etcd.WithSealer(sealer(t, lenient, &[]atrest.Key{newKey("k1")}))}, atrest.ErrWrongKey},
		"missing key":        {[]etcd.Option{etcd.WithSealer(sealer(t, atrest.Config{}, &[]atrest.Key{newKey("k2")}))}, atrest.ErrKeyMissing},
		"missing, lenient":   {[]etcd.Option{etcd.WithSealer(sealer(t, lenient, &[]atrest.Key{newKey("k2")}))}, atrest.ErrKeyMissing},
		"no sealer":          {nil, atrest.ErrKeyMissing},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := etcd.New(sealedCtx(t), client, registry(), append([]etcd.Option{etcd.WithPrefix(prefix)}, c.opts...)...)
			require.ErrorIs(t, err, c.want)
			assert.True(t, atrest.IsKeyError(err))
			assert.ErrorContains(t, err, `key "k1"`)
		})
	}
}

// TestP2_ValueMovedToAnotherKeyFailsToDecryptInEtcd: a value copied onto
// another resource's key fails authentication: New refuses the prefix in
// strict mode naming the key; in lenient mode it reports it, Get of that
// resource is a typed error naming it, and List leaves it out.
func TestP2_ValueMovedToAnotherKeyFailsToDecryptInEtcd(t *testing.T) {
	prefix := newPrefix()
	keys := []atrest.Key{newKey("k1")}
	writeInts(t, newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(sealer(t, atrest.Config{}, &keys))), 3)
	key := func(id string) string { return prefix + "sealed/" + conformance.IntResourceType + "/" + id }
	resp, err := client.Get(sealedCtx(t), key("r0"))
	require.NoError(t, err)
	_, err = client.Put(sealedCtx(t), key("r1"), string(resp.Kvs[0].Value))
	require.NoError(t, err)

	_, err = etcd.New(sealedCtx(t), client, registry(), etcd.WithPrefix(prefix), etcd.WithSealer(sealer(t, atrest.Config{}, &keys)))
	require.ErrorIs(t, err, atrest.ErrAuthentication)
	assert.ErrorContains(t, err, "sealed/r1")

	var reported []error
	st := newState(t, etcd.WithPrefix(prefix), etcd.WithSealer(sealer(t, atrest.Config{Lenient: true, Report: func(err error) { reported = append(reported, err) }}, &keys)))
	require.Len(t, reported, 1)
	assert.ErrorIs(t, reported[0], atrest.ErrAuthentication)
	_, err = st.Get(sealedCtx(t), resource.NewPointer("sealed", conformance.IntResourceType, "r1"))
	require.ErrorIs(t, err, atrest.ErrAuthentication)
	var re *atrest.RecordError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, conformance.IntResourceType+"(sealed/r1)", re.Resource)
	l, err := st.List(sealedCtx(t), resource.NewKind("sealed", conformance.IntResourceType))
	require.NoError(t, err)
	assert.Len(t, l.Items, 2, "left out of lists")
}
