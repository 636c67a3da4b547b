package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// items lists the test daemon's items, as "ID:size".
func items(t *testing.T, st state.State) []string {
	t.Helper()
	l, err := st.List(context.Background(), resource.NewKind("shop", "Items.test.resgraph.dev"))
	require.NoError(t, err)
	var out []string
	for _, r := range l.Items {
		out = append(out, r.Metadata().ID()+":"+strconv.Itoa(r.(*item).TypedSpec().Size))
	}
	return out
}

// TestCT6_AFileIsWrittenWholeOrNotAtAll: create and apply of a file whose
// second document is refused — by the daemon's checks (a spec key the type
// has not, a controller's resource, a resource that exists) or by
// resgraphctl's reading (a type the daemon does not know, a document that
// is not a resource, the same resource twice) — write nothing, not even
// the good first document, and name each refused document with its file,
// place, resource and why; several refused documents are each named. The
// good file is then written whole.
func TestCT6_AFileIsWrittenWholeOrNotAtAll(t *testing.T) {
	d := serveTestDaemon(t)
	ctx := context.Background()
	require.NoError(t, d.st.Create(ctx, newItem("mine", 1), state.WithCreateOwner("ItemController")))
	d.create(t, newItem("old", 1))
	before := items(t, d.st)
	const good = "metadata: {type: item, id: new}\nspec: {size: 1}\n"
	for _, c := range []struct {
		name, verbs, doc, want string
	}{
		{"a spec key the type has not", "create apply", "metadata: {type: item, id: y}\nspec: {size: 2, Bogus: 1}\n",
			`-: document 2 (item/y): remote: codec: decode Items.test.resgraph.dev(shop/y): spec.Bogus: main.itemSpec has no field "Bogus"`},
		{"a controller's resource", "apply", "metadata: {type: item, id: mine}\nspec: {size: 5}\n",
			`-: document 2 (item/mine): resource Items.test.resgraph.dev(shop/mine): owner is "ItemController", not ""`},
		{"a resource that exists", "create", "metadata: {type: item, id: old}\nspec: {size: 5}\n",
			`-: document 2 (item/old): resource Items.test.resgraph.dev(shop/old): already exists`},
		{"an unknown type", "create apply", "metadata: {type: nope, id: y}\nspec: {}\n",
			`-: document 2: metadata.type: definition: no resource type is named "nope"`},
		{"not a resource document", "create apply", "metadata: {type: item, id: y}\nextra: 1\n",
			`-: document 2: not a resource document: line 5: field extra not found`},
		{"the same resource twice", "create apply", "metadata: {type: item, id: new}\nspec: {size: 2}\n",
			`-: document 2 (item/new): names the same resource as -: document 1 (item/new)`},
	} {
		for _, verb := range strings.Fields(c.verbs) {
			out, errOut, code := ctlIn(t, d.socket, good+"---\n"+c.doc, verb, "-f", "-")
			assert.Equal(t, 1, code, "%s %s: %s", verb, c.name, errOut)
			assert.Empty(t, out, "%s %s: nothing written, nothing said written", verb, c.name)
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			require.Len(t, lines, 2, "%s %s: %s", verb, c.name, errOut)
			assert.True(t, strings.HasPrefix(lines[0], "resgraphctl: "+c.want), "%s %s: %s", verb, c.name, lines[0])
			assert.Equal(t, "resgraphctl: nothing written: 1 of 2 documents refused", lines[1], "%s %s", verb, c.name)
			assert.Equal(t, before, items(t, d.st), "%s %s: nothing written", verb, c.name)
		}
	}

	bad1 := "metadata: {type: nope, id: y}\nspec: {}\n"
	bad2 := "metadata: {type: item, id: old}\nspec: {size: 5}\n"
	_, errOut, code := ctlIn(t, d.socket, bad1+"---\n"+good+"---\n"+bad2, "create", "-f", "-")
	assert.Equal(t, 1, code)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	require.Len(t, lines, 3, errOut)
	assert.Contains(t, lines[0], "-: document 1: metadata.type: ")
	assert.Contains(t, lines[1], "-: document 3 (item/old): ")
	assert.Equal(t, "resgraphctl: nothing written: 2 of 3 documents refused", lines[2])
	assert.Equal(t, before, items(t, d.st))

	out, errOut, code := ctlIn(t, d.socket, good+"---\nmetadata: {type: item, id: y}\nspec: {size: 2}\n", "apply", "-f", "-")
	require.Zero(t, code, errOut)
	assert.Equal(t, "item/new created\nitem/y created\n", out)
	assert.Equal(t, []string{"mine:1", "new:1", "old:1", "y:2"}, items(t, d.st))
}

// racer is a served state where another writer creates the resource
// named id just before the daemon's own Create of it: a write whose
// check passed, and that then meets a conflict.
type racer struct {
	state.State
	id string
}

func (r racer) Create(ctx context.Context, res resource.Resource, opts ...state.CreateOption) error {
	if res.Metadata().ID() == r.id {
		if err := r.State.Create(ctx, newItem(r.id, 9)); err != nil {
			return err
		}
	}
	return r.State.Create(ctx, res, opts...)
}

// TestCT6_AWriteThatFailsAfterItsCheckSaysWhatWasWritten: when a
// document's check passed but its write then fails (another writer
// created the resource in between), create stops there and says which
// documents were written and which were not.
func TestCT6_AWriteThatFailsAfterItsCheckSaysWhatWasWritten(t *testing.T) {
	d := serveTestDaemonOf(t, func(st state.State) state.State { return racer{State: st, id: "raced"} })
	file := "metadata: {type: item, id: first}\nspec: {size: 1}\n---\n" +
		"metadata: {type: item, id: raced}\nspec: {size: 2}\n---\n" +
		"metadata: {type: item, id: last}\nspec: {size: 3}\n"
	out, errOut, code := ctlIn(t, d.socket, file, "create", "-f", "-")
	assert.Equal(t, 1, code, errOut)
	assert.Equal(t, "item/first created\n", out)
	assert.Equal(t, "resgraphctl: -: document 2 (item/raced): resource Items.test.resgraph.dev(shop/raced): already exists "+
		"(its check had passed: another writer changed the daemon's state meanwhile)\n"+
		"resgraphctl: 1 of 3 documents written (above); not written: -: document 2 (item/raced), -: document 3 (item/last)\n", errOut)
	assert.Equal(t, []string{"first:1", "raced:9"}, items(t, d.st))
}

// TestCT6_ADeniedDocumentWritesNothing: over a daemon's access rules
// (remote.Serve with the unix peer's credentials), a file whose second
// document the caller may not write writes nothing; the denial names it.
func TestCT6_ADeniedDocumentWritesNothing(t *testing.T) {
	reg := testRegistry()
	pol, err := access.NewPolicy(reg.Definitions(), access.Rules{
		Roles:    []access.Role{{Name: "shopper", Grants: []access.Grant{{Verbs: access.AllVerbs, Namespaces: []string{"*"}, Types: []string{"items"}}}}},
		Bindings: []access.Binding{{Role: "shopper", To: []access.Match{access.UID(uint32(os.Getuid()))}}},
	}, access.WithAudit(zap.NewNop()))
	require.NoError(t, err)
	st := inmem.NewState()
	socket := filepath.Join(t.TempDir(), "api.sock")
	lis, err := net.Listen("unix", socket)
	require.NoError(t, err)
	srv := remote.NewServer(st, reg)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- remote.Serve(ctx, lis, func(r grpc.ServiceRegistrar) { srv.Register(r) },
			remote.WithAuthenticator(access.PeerCredentials(), pol), remote.WithGRPCOptions(srv.GRPCServerOptions()...))
	}()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-served)
	})

	file := "metadata: {type: item, id: x}\nspec: {size: 1}\n---\nmetadata: {type: secret, id: k}\nspec: {holder: h, key: v}\n"
	out, errOut, code := ctlIn(t, socket, file, "apply", "-f", "-")
	assert.Equal(t, 1, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "resgraphctl: -: document 2 (secret/k): denied: identity uid=")
	assert.Contains(t, errOut, "has no role granting get on Secrets.test.resgraph.dev(vault)")
	assert.True(t, strings.HasSuffix(errOut, "resgraphctl: nothing written: 1 of 2 documents refused\n"), errOut)
	assert.Empty(t, items(t, st))
}
