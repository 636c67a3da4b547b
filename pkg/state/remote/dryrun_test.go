package remote_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// dryNS is the namespace of the dry-run tests.
const dryNS = "dry"

// dryEnv is a state served on a unix socket with a client of it, a
// dry-run client (remote.WithDryRun) and their unstructured twins.
type dryEnv struct {
	st                  state.State
	real, dry           state.State
	realLoose, dryLoose state.State
}

func newDryEnv(t *testing.T) *dryEnv {
	t.Helper()
	reg := registry()
	codec.MustRegister[linkSpec, linkDef](reg)
	st := inmem.NewState()
	conn := dial(t, serveRegistry(t, listen(t, "unix"), st, reg).Addr)
	mk := func(opts ...remote.ClientOption) state.State {
		cl, err := remote.NewClient(conn, registry(), opts...)
		require.NoError(t, err)
		return cl
	}
	return &dryEnv{st: st, real: mk(), dry: mk(remote.WithDryRun()),
		realLoose: mk(remote.WithUnstructured()), dryLoose: mk(remote.WithUnstructured(), remote.WithDryRun())}
}

// stored returns the served state's copy of the IntResource id.
func (e *dryEnv) stored(t *testing.T, id string) *conformance.IntResource {
	t.Helper()
	r, err := e.st.Get(context.Background(), resource.NewPointer(dryNS, conformance.IntResourceType, id))
	require.NoError(t, err)
	return r.(*conformance.IntResource)
}

// TestN5_ADryRunRefusesWhatTheWriteRefusesAndWritesNothing: each write
// the served state or the server refuses — a Create of a resource that
// exists, an Update of another owner's resource, from a stale version,
// of a resource that does not exist or is tearing down, a spec key the
// type has not, a type the server does not know — is refused by the dry
// run with the write's own error (code, classes, message), and the dry
// run writes nothing; a write that passes is nil as a dry run, writes
// nothing, and then passes for real.
func TestN5_ADryRunRefusesWhatTheWriteRefusesAndWritesNothing(t *testing.T) {
	ctx := testCtx(t)
	e := newDryEnv(t)
	require.NoError(t, e.st.Create(ctx, conformance.NewIntResource(dryNS, "a", 1)))
	require.NoError(t, e.st.Create(ctx, conformance.NewIntResource(dryNS, "owned", 1), state.WithCreateOwner("ctrl")))
	require.NoError(t, e.st.Create(ctx, conformance.NewIntResource(dryNS, "going", 1)))
	_, err := e.st.Teardown(ctx, resource.NewPointer(dryNS, conformance.IntResourceType, "going"))
	require.NoError(t, err)
	stale := e.stored(t, "a")
	require.NoError(t, e.st.Update(ctx, e.stored(t, "a")))
	linkType := (*typed.Resource[linkSpec, linkDef])(nil).Definition().Type
	changed := func(id string) resource.Resource {
		r := e.stored(t, id)
		r.TypedSpec().Value = 7
		return r
	}
	for name, write := range map[string]func(real bool) error{
		"create of a resource that exists": func(real bool) error {
			return e.pick(real).Create(ctx, conformance.NewIntResource(dryNS, "a", 2))
		},
		"update of another owner's resource": func(real bool) error { return e.pick(real).Update(ctx, changed("owned")) },
		"update from a stale version": func(real bool) error {
			r := stale.DeepCopy().(*conformance.IntResource)
			r.TypedSpec().Value = 9
			return e.pick(real).Update(ctx, r)
		},
		"update of a resource that does not exist": func(real bool) error {
			return e.pick(real).Update(ctx, conformance.NewIntResource(dryNS, "missing", 2))
		},
		"update of a resource tearing down": func(real bool) error { return e.pick(real).Update(ctx, changed("going")) },
		"a spec key the type has not": func(real bool) error {
			md := resource.NewMetadata("network", linkType, "eth0", resource.VersionUndefined)
			return e.pickLoose(real).Create(ctx, remote.NewUnstructured(md, json.RawMessage(`{"mtu":1400,"bogus":3}`)))
		},
		"a type the server does not know": func(real bool) error {
			md := resource.NewMetadata(dryNS, "Nope.test.resgraph.dev", "x", resource.VersionUndefined)
			return e.pickLoose(real).Create(ctx, remote.NewUnstructured(md, json.RawMessage(`{}`)))
		},
	} {
		before := revision(t, e.st)
		dryErr := write(false)
		require.Error(t, dryErr, name)
		assert.Equal(t, before, revision(t, e.st), "%s: the dry run wrote nothing", name)
		realErr := write(true)
		require.Error(t, realErr, name)
		assert.Equal(t, realErr.Error(), dryErr.Error(), name)
		assert.Equal(t, status.Code(realErr), status.Code(dryErr), name)
		for class, is := range map[string]func(error) bool{"conflict": state.IsConflictError, "owner": state.IsOwnerConflictError,
			"phase": state.IsPhaseConflictError, "not found": state.IsNotFoundError, "invalid": state.IsInvalidError} {
			assert.Equal(t, is(realErr), is(dryErr), "%s: %s class", name, class)
		}
	}

	before := revision(t, e.st)
	require.NoError(t, e.dry.Create(ctx, conformance.NewIntResource(dryNS, "new", 1)))
	require.NoError(t, e.dry.Update(ctx, changed("a")))
	md := resource.NewMetadata("network", linkType, "eth0", resource.VersionUndefined)
	require.NoError(t, e.dryLoose.Create(ctx, remote.NewUnstructured(md, json.RawMessage(`{"mtu":1400}`))))
	assert.Equal(t, before, revision(t, e.st), "the dry runs wrote nothing")
	_, err = e.st.Get(ctx, resource.NewPointer(dryNS, conformance.IntResourceType, "new"))
	assert.True(t, state.IsNotFoundError(err), "%v", err)
	require.NoError(t, e.real.Create(ctx, conformance.NewIntResource(dryNS, "new", 1)))
	require.NoError(t, e.real.Update(ctx, changed("a")))
	assert.Equal(t, 7, e.stored(t, "a").TypedSpec().Value)
}

func (e *dryEnv) pick(real bool) state.State {
	if real {
		return e.real
	}
	return e.dry
}

func (e *dryEnv) pickLoose(real bool) state.State {
	if real {
		return e.realLoose
	}
	return e.dryLoose
}

// TestN5_ADryRunSetsNothingAndDestroysNothing: a dry run's Create leaves
// the caller's resource as it was (no version), and a dry-run client
// refuses Destroy before sending anything.
func TestN5_ADryRunSetsNothingAndDestroysNothing(t *testing.T) {
	ctx := testCtx(t)
	e := newDryEnv(t)
	r := conformance.NewIntResource(dryNS, "a", 1)
	require.NoError(t, e.dry.Create(ctx, r))
	assert.Equal(t, resource.VersionUndefined, r.Metadata().Version())
	require.NoError(t, e.st.Create(ctx, conformance.NewIntResource(dryNS, "a", 1)))
	err := e.dry.Destroy(ctx, r.Metadata())
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, "Destroy is refused, nothing sent")
	e.stored(t, "a")
}

// TestN5_ADryRunIsDecidedAndAuditedAsTheWrite: a dry run goes through the
// access rules as the write does — denied with the write's own message,
// audited as a denial — and an allowed one is audited as a write whose
// outcome says nothing was written.
func TestN5_ADryRunIsDecidedAndAuditedAsTheWrite(t *testing.T) {
	ctx := testCtx(t)
	e := newAccessEnv(t, "reader-one")
	before := e.seed(t)
	dryClient := func(t *testing.T, conn *grpc.ClientConn) state.State {
		cl, err := remote.NewClient(conn, accessRegistry(), remote.WithDryRun())
		require.NoError(t, err)
		return cl
	}
	reader, readerDry := accessClient(t, e.unixConn(t)), dryClient(t, e.unixConn(t))
	realErr := reader.Create(ctx, conformance.NewIntResource("one", "new", 1))
	dryErr := readerDry.Create(ctx, conformance.NewIntResource("one", "new", 1))
	require.Error(t, dryErr)
	assert.Equal(t, codes.PermissionDenied, status.Code(dryErr))
	assert.True(t, access.IsDeniedError(dryErr))
	assert.Equal(t, realErr.Error(), dryErr.Error())

	writerDry := dryClient(t, e.certConn(t, "bystander"))
	require.NoError(t, writerDry.Create(ctx, conformance.NewIntResource("two", "new", 1)))
	assert.Equal(t, before, e.contents(t), "nothing written")
	allowed := e.audited(`certificate "CN=bystander"`, "allowed")
	require.NotEmpty(t, allowed)
	last := allowed[len(allowed)-1].ContextMap()
	assert.Equal(t, "create", last["verb"])
	assert.Equal(t, "new", last["id"])
	assert.Equal(t, "remote: checked only (CheckWrite): nothing written", last["error"])
	assert.NotContains(t, last, "version")
}
