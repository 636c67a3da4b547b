package remote_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// The hostile-client suite: each test is a client doing harm through the
// access door (remote.Serve with rules), while a well-behaved client (the
// bystander, a writer over mutual TLS) does its work before and during
// the attack. Each checks the status the attacker gets, that nothing was
// written (the state read back), that no goroutine is left (goleak), and
// that the bystander's requests all succeed, reporting its p99 latency
// before and during the attack.

// everyVerb calls every verb of st on a resource of namespace ns and
// returns each call's error, by verb.
func everyVerb(ctx context.Context, st state.State, ns string) map[access.Verb]error {
	ptr := resource.NewPointer(ns, conformance.IntResourceType, "a")
	kind := resource.NewKind(ns, conformance.IntResourceType)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The seeded resource a is at version 1 with value 1: r changes it,
	// torn only tears it down.
	r := conformance.NewIntResource(ns, "a", 7)
	r.Metadata().SetVersion(resource.VersionUndefined.Next())
	torn := conformance.NewIntResource(ns, "a", 1)
	torn.Metadata().SetVersion(resource.VersionUndefined.Next())
	torn.Metadata().SetPhase(resource.PhaseTearingDown)
	_, getErr := st.Get(ctx, ptr)
	_, listErr := st.List(ctx, kind)
	return map[access.Verb]error{
		access.Get:      getErr,
		access.List:     listErr,
		access.Watch:    st.WatchKind(wctx, kind, make(chan state.Event, 1), state.WithBootstrapContents(true)),
		access.Create:   st.Create(ctx, conformance.NewIntResource(ns, "new", 1)),
		access.Update:   st.Update(ctx, r),
		access.Teardown: st.Update(ctx, torn, state.WithExpectedPhaseAny()),
		access.Destroy:  st.Destroy(ctx, ptr),
	}
}

// TestA1_HostileUIDWithNoRole: a unix peer no role is bound to gets
// PermissionDenied for every verb on every namespace, and for the
// definitions; nothing is written.
func TestA1_HostileUIDWithNoRole(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	e := newAccessEnv(t, "")
	before := e.seed(t)
	by := e.newBystander(t)
	attacker := accessClient(t, e.unixConn(t))
	by.unaffected(t, func(actx context.Context, passed func()) {
		for actx.Err() == nil {
			for _, ns := range hostileNamespaces {
				for v, err := range everyVerb(ctx, attacker, ns) {
					assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v on %s: %v", v, ns, err)
					assert.True(t, access.IsDeniedError(err))
				}
			}
			_, err := remote.Definitions(ctx, e.unixConn(t))
			assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
			passed()
		}
	})
	assert.Equal(t, before, e.contents(t), "nothing written")
	assert.Empty(t, e.audited("uid="+uidString(), "allowed"))
}

// TestA1_HostileReaderTriesEveryVerbElsewhere: a role that may read one
// namespace gets what it reads there, and PermissionDenied for every
// verb on every other namespace and for every write in its own.
func TestA1_HostileReaderTriesEveryVerbElsewhere(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	e := newAccessEnv(t, "reader-one")
	before := e.seed(t)
	by := e.newBystander(t)
	attacker := accessClient(t, e.unixConn(t))
	by.unaffected(t, func(actx context.Context, passed func()) {
		for actx.Err() == nil {
			for _, ns := range hostileNamespaces {
				for v, err := range everyVerb(ctx, attacker, ns) {
					if ns == "one" && !v.IsWrite() {
						assert.NoError(t, err, "%v on one", v)
						continue
					}
					assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v on %s: %v", v, ns, err)
					assert.ErrorContains(t, err, "has no role granting "+v.String()+" on "+conformance.IntResourceType+"("+ns+")")
				}
			}
			passed()
		}
	})
	assert.Equal(t, before, e.contents(t), "nothing written")
}

// TestA2_HostileWatchOfASensitiveType: a watch of the secrets is denied
// to a role that reaches every type by wildcard (the writer) and to one
// namespace's reader, and no event of them reaches either; a role naming
// the type watches them.
func TestA2_HostileWatchOfASensitiveType(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	e := newAccessEnv(t, "reader-one")
	before := e.seed(t)
	by := e.newBystander(t)
	kind := resource.NewKind("vault", secretType)
	keeperCh := make(chan state.Event, 64)
	require.NoError(t, accessClient(t, e.certConn(t, "keeper")).WatchKind(ctx, kind, keeperCh, state.WithBootstrapContents(true)))
	assert.Equal(t, "hunter2", (<-keeperCh).Resource.(*secret).TypedSpec().Key, "granted by name")
	writer, reader := accessClient(t, e.certConn(t, "bystander")), accessClient(t, e.unixConn(t))
	by.unaffected(t, func(actx context.Context, passed func()) {
		for actx.Err() == nil {
			for _, cl := range []state.State{writer, reader} {
				ch := make(chan state.Event, 64)
				err := cl.WatchKind(ctx, kind, ch, state.WithBootstrapContents(true))
				assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
				assert.Empty(t, ch, "no event of a hidden type")
				err = cl.Watch(ctx, resource.NewPointer("vault", secretType, "k"), ch)
				assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
				_, err = cl.Get(ctx, resource.NewPointer("vault", secretType, "k"))
				assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
				if cl == writer {
					assert.ErrorContains(t, err, "by name (resource k): the type is sensitive")
				}
			}
			passed()
		}
	})
	assert.Equal(t, before, e.contents(t), "nothing written")
}

// TestA1_HostileFuzzedRequests: requests of every method, mutated at
// random (a fixed seed), from a reader of one namespace: each ends with a
// typed status (never Internal or Unknown), none writes, and the server
// serves the bystander throughout. FuzzGuardedRequest explores further
// (make fuzz).
func TestA1_HostileFuzzedRequests(t *testing.T) {
	noLeaks(t)
	e := newAccessEnv(t, "reader-one")
	before := e.seed(t)
	by := e.newBystander(t)
	conn := e.unixConn(t)
	seeds := guardedSeeds()
	rng := rand.New(rand.NewPCG(31, 28))
	by.unaffected(t, func(actx context.Context, passed func()) {
		for i := 0; actx.Err() == nil; i++ {
			s := seeds[i%len(seeds)]
			payload := mutate(rng, s.payload)
			err := fuzzCall(actx, conn, fuzzMethods[int(s.method)%len(fuzzMethods)], payload, s.second)
			if code := status.Code(err); actx.Err() == nil && (code == codes.Internal || code == codes.Unknown) {
				t.Errorf("%s %x: %v", fuzzMethods[int(s.method)%len(fuzzMethods)], payload, err)
			}
			if i%300 == 299 {
				passed()
			}
		}
	})
	assert.Equal(t, before, e.contents(t), "nothing written")
}

// FuzzGuardedRequest is FuzzServerRequest through the access door, as a
// reader of namespace one: whatever the bytes, the call ends with a typed
// status and writes nothing (the reader may write nothing).
func FuzzGuardedRequest(f *testing.F) {
	e := newAccessEnv(f, "reader-one")
	e.seed(f)
	conn := e.unixConn(f)
	for _, s := range guardedSeeds() {
		f.Add(s.method, s.payload, s.second)
	}
	f.Fuzz(func(t *testing.T, method byte, payload, second []byte) {
		before := revision(t, e.st)
		err := fuzzCall(context.Background(), conn, fuzzMethods[int(method)%len(fuzzMethods)], payload, second)
		if code := status.Code(err); code == codes.Internal || code == codes.Unknown {
			t.Fatalf("%s: %v", fuzzMethods[int(method)%len(fuzzMethods)], err)
		}
		if after := revision(t, e.st); after != before {
			t.Fatalf("a reader's call wrote (revision %d -> %d): %v", before, after, err)
		}
	})
}

// guardedSeeds are well-formed requests of every method on namespace one
// (the reader's) and two, and a few broken ones.
func guardedSeeds() []fuzzSeed {
	m := func(msg proto.Message) []byte {
		b, err := proto.Marshal(msg)
		if err != nil {
			panic(err)
		}
		return b
	}
	var out []fuzzSeed
	for _, ns := range []string{"one", "two"} {
		ptr := &pb.Pointer{Namespace: ns, Type: conformance.IntResourceType, Id: "a"}
		kind := &pb.Kind{Namespace: ns, Type: conformance.IntResourceType}
		res := &pb.Resource{Metadata: &pb.Metadata{Namespace: ns, Type: conformance.IntResourceType, Id: "a", Version: 1}, Spec: []byte(`{"Value":2}`)}
		out = append(out,
			fuzzSeed{0, m(&pb.GetRequest{Pointer: ptr}), nil},
			fuzzSeed{1, m(&pb.ListRequest{Kind: kind}), nil},
			fuzzSeed{2, m(&pb.CreateRequest{Resource: &pb.Resource{Metadata: &pb.Metadata{Namespace: ns, Type: conformance.IntResourceType, Id: "n"}, Spec: []byte(`{"Value":1}`)}}), nil},
			fuzzSeed{3, m(&pb.UpdateRequest{Resource: res}), nil},
			fuzzSeed{4, m(&pb.DestroyRequest{Pointer: ptr}), nil},
			fuzzSeed{5, m(&pb.WatchClientMessage{Request: &pb.WatchRequest{Kind: kind, BootstrapContents: true}}), m(&pb.WatchClientMessage{Credits: 2})},
			fuzzSeed{6, m(&pb.KindHeadRequest{Kind: kind}), nil},
		)
	}
	secret := &pb.Pointer{Namespace: "vault", Type: secretType, Id: "k"}
	return append(out, fuzzSeed{0, m(&pb.GetRequest{Pointer: secret}), nil}, fuzzSeed{7, nil, nil},
		fuzzSeed{2, []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, nil})
}

// mutate flips, drops or inserts a few bytes of b.
func mutate(rng *rand.Rand, b []byte) []byte {
	out := append([]byte(nil), b...)
	for range rng.IntN(4) {
		switch i := rng.IntN(len(out) + 1); {
		case len(out) == 0 || rng.IntN(3) == 0:
			out = append(out[:i:i], append([]byte{byte(rng.Uint32())}, out[i:]...)...)
		case rng.IntN(2) == 0 && i < len(out):
			out = append(out[:i], out[i+1:]...)
		case i < len(out):
			out[i] ^= byte(1 << rng.IntN(8))
		}
	}
	return out
}

func uidString() string { return strconv.Itoa(os.Getuid()) }
