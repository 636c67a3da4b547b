package remote_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/remote"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// TestA2_ExplanationsHideSensitiveTypes: served to a subject (as a door
// such as remote.Serve puts it in the call's context), the explanations
// leave out the resources of a sensitive type the subject is not granted
// by name, and the explanation of such a resource is PermissionDenied; a
// subject granted the type sees them.
func TestA2_ExplanationsHideSensitiveTypes(t *testing.T) {
	env := runtimetest.Start(t, runtimetest.WithControllers(linkToStatus()))
	runtimetest.Create(t, env.State, typed.NewDefault[linkSpec, linkDef]("eth0", linkSpec{MTU: 1500}))
	runtimetest.AssertResource(t, env.State, "eth0", runtimetest.Holds(func(s *linkStatus) bool { return s.TypedSpec().MTU == 1500 }))
	runtimetest.Settle(t, env.Runtime)

	defs := definition.NewRegistry()
	require.NoError(t, defs.Add(definition.Definition{Type: "Links.test.resgraph.dev", DefaultNamespace: "net", Aliases: []string{"links"}, Sensitive: true}))
	require.NoError(t, defs.Add(definition.Definition{Type: "LinkStatuses.test.resgraph.dev", DefaultNamespace: "net"}))
	all := []string{"*"}
	policy, err := access.NewPolicy(defs, access.Rules{
		Roles: []access.Role{
			{Name: "operator", Grants: []access.Grant{{Verbs: access.AllVerbs, Namespaces: all, Types: all}}, Pages: []access.Page{access.PageExplain}},
			{Name: "keeper", Grants: []access.Grant{{Verbs: []access.Verb{access.Get}, Namespaces: all, Types: []string{"links"}}}},
		},
		Bindings: []access.Binding{
			{Role: "operator", To: []access.Match{access.ProcessName("operator"), access.ProcessName("keeper")}},
			{Role: "keeper", To: []access.Match{access.ProcessName("keeper")}},
		},
	})
	require.NoError(t, err)
	client := func(name string) *remote.Client {
		sub := policy.Subject(access.Identity{Transport: access.Process, Name: name})
		return remote.NewClient(dial(t, serveAs(t, env, sub)))
	}
	operator, keeper := client("operator"), client("keeper")
	ctx := context.Background()
	spec := resource.NewPointer("net", "Links.test.resgraph.dev", "eth0")
	status0 := resource.NewPointer("net", "LinkStatuses.test.resgraph.dev", "eth0")

	_, err = operator.Explain(ctx, spec)
	assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	assert.ErrorContains(t, err, "has no role granting get on Links.test.resgraph.dev(net)")
	_, err = keeper.Explain(ctx, spec)
	assert.NoError(t, err)

	mentions := func(x explain.Controller) (n int) {
		for _, r := range x.Recent {
			if (r.Item != nil && r.Item.Type == "Links.test.resgraph.dev") || (r.Cause != nil && r.Cause.Type == "Links.test.resgraph.dev") {
				n++
			}
		}
		return n
	}
	hidden, err := operator.ExplainController(ctx, "LinkToStatus")
	require.NoError(t, err)
	assert.Zero(t, mentions(hidden), "the operator's explanation leaves the links out")
	assert.Contains(t, hidden.Notes, "resources of sensitive types this identity is not granted are left out")
	shown, err := keeper.ExplainController(ctx, "LinkToStatus")
	require.NoError(t, err)
	assert.NotZero(t, mentions(shown), "the keeper's names them")

	x, err := operator.Explain(ctx, status0)
	require.NoError(t, err, "a status is not sensitive")
	for _, c := range x.Changes {
		for _, r := range c.Reconciles {
			assert.False(t, r.Cause != nil && r.Cause.Type == "Links.test.resgraph.dev", "no reconcile caused by a link")
		}
	}
}

// serveAs serves env's observer on a unix socket of its own to sub (every
// call's context carries it, as remote.Serve's does) until the test ends,
// and returns the dial target.
func serveAs(t *testing.T, env *runtimetest.Env, sub *access.Subject) string {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "api.sock"))
	require.NoError(t, err)
	gs := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(access.NewContext(ctx, sub), req)
	}))
	remote.NewServer(env.Runtime.Observe()).Register(gs)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gs.Serve(lis)
	}()
	t.Cleanup(func() {
		gs.Stop()
		<-done
	})
	return "unix://" + lis.Addr().String()
}
