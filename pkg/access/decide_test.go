package access_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestA1_DenyByDefault: an identity no binding matches is denied every
// verb; a role allows its verbs on its namespaces and types and nothing
// else; a group binding matches the primary and supplementary groups.
func TestA1_DenyByDefault(t *testing.T) {
	ctx := testCtx(t)
	p, _ := policy(t, readerWriter())
	for _, v := range access.Verbs {
		d := p.Subject(nobody).Decide(ctx, v, "network", linkType, "eth0")
		assert.False(t, d.Allowed, "%v", v)
		assert.Empty(t, d.Rule)
	}
	r := p.Subject(reader)
	for _, v := range access.Verbs {
		assert.Equal(t, !v.IsWrite(), r.Decide(ctx, v, "anywhere", linkType, "x").Allowed, "reader %v", v)
	}
	w := p.Subject(writer)
	assert.Equal(t, []string{"reader", "writer"}, w.Roles(), "uid 1002 is in group 100: reader too")
	assert.Equal(t, "role writer", w.Decide(ctx, access.Update, "network", linkType, "eth0").Rule)
	assert.False(t, w.Decide(ctx, access.Update, "other", linkType, "eth0").Allowed, "another namespace")
	assert.False(t, w.Decide(ctx, access.Create, "vault", secretType, "k").Allowed, "another type")
	inSupplementary := access.Identity{Transport: access.UnixPeer, UID: 7, GID: 7, Groups: []uint32{5, 100}}
	assert.Equal(t, []string{"reader"}, p.Subject(inSupplementary).Roles())
	// Transports do not mix: a certificate is never a uid.
	assert.Empty(t, p.Subject(access.Identity{Transport: access.Certificate, CommonName: "1001", UID: 1001}).Roles())
	assert.Empty(t, p.Subject(access.Identity{}).Roles(), "anonymous")
}

// TestA1_FunctionsDenyOverAllow: a rule function's Deny denies what a
// role allows; its Allow allows what no role does; Abstain leaves the
// decision to the others.
func TestA1_FunctionsDenyOverAllow(t *testing.T) {
	ctx := testCtx(t)
	rules := readerWriter()
	rules.Funcs = []access.Func{{Name: "tenants", Func: func(_ context.Context, a access.Access) (access.Effect, string) {
		switch {
		case a.ID == "forbidden":
			return access.Deny, "not your tenant"
		case a.Identity.UID == 4242 && a.Verb == access.Get:
			return access.Allow, ""
		}
		return access.Abstain, ""
	}}}
	p, _ := policy(t, rules)
	d := p.Subject(writer).Decide(ctx, access.Update, "network", linkType, "forbidden")
	assert.Equal(t, access.Decision{Rule: "function tenants", Reason: "not your tenant"}, d)
	assert.Equal(t, "function tenants", p.Subject(nobody).Decide(ctx, access.Get, "x", linkType, "a").Rule)
	assert.False(t, p.Subject(nobody).Decide(ctx, access.List, "x", linkType, "").Allowed)
	assert.Equal(t, "role writer", p.Subject(writer).Decide(ctx, access.Update, "network", linkType, "eth0").Rule)
}

// TestA1_WildcardPatterns: "*", "prefix*" and "*suffix" over namespaces
// and types.
func TestA1_WildcardPatterns(t *testing.T) {
	ctx := testCtx(t)
	p, _ := policy(t, access.Rules{
		Roles: []access.Role{{Name: "r", Grants: []access.Grant{
			{Verbs: []access.Verb{access.Get}, Namespaces: []string{"kube-*"}, Types: []string{"*.test.resgraph.dev"}},
		}}},
		Bindings: []access.Binding{{Role: "r", To: []access.Match{access.Anyone()}}},
	})
	s := p.Subject(nobody)
	assert.True(t, s.Decide(ctx, access.Get, "kube-system", linkType, "a").Allowed)
	assert.False(t, s.Decide(ctx, access.Get, "system", linkType, "a").Allowed)
	assert.False(t, s.Decide(ctx, access.Get, "kube-system", "Links.other.dev", "a").Allowed)
	assert.False(t, s.Decide(ctx, access.Get, "kube-system", secretType, "a").Allowed, "a pattern never reaches a sensitive type")
}

// TestA2_SensitiveTypesOnlyByName: a wildcard grant does not reach a
// sensitive type — its Get, List and Watch are denied, naming why — and a
// grant naming it (by alias) does; Visible says the same for
// explanations.
func TestA2_SensitiveTypesOnlyByName(t *testing.T) {
	ctx := testCtx(t)
	p, _ := policy(t, readerWriter())
	st := inmem.NewState()
	require.NoError(t, st.Create(ctx, newSecret("vault", "k1", "hunter2")))
	rd := p.Guard(st, reader)
	_, err := rd.Get(ctx, newSecret("vault", "k1", "").Metadata())
	require.True(t, access.IsDeniedError(err), "%v", err)
	assert.EqualError(t, err, "denied: identity uid=1001 has no role granting get on "+secretType+"(vault) by name (resource k1): the type is sensitive, and only a grant naming it reaches it")
	_, err = rd.List(ctx, resource.NewKind("vault", secretType))
	assert.True(t, access.IsDeniedError(err), "%v", err)
	ch := make(chan state.Event, 8)
	err = rd.WatchKind(ctx, resource.NewKind("vault", secretType), ch, state.WithBootstrapContents(true))
	assert.True(t, access.IsDeniedError(err), "%v", err)
	assert.Empty(t, ch, "no event of a hidden type reaches the watch")
	assert.False(t, p.Subject(reader).Visible(ctx, "vault", secretType))
	assert.True(t, p.Subject(reader).Visible(ctx, "vault", linkType))

	keeper := access.Identity{Transport: access.Certificate, CommonName: "keeper", Subject: "CN=keeper"}
	got, err := p.Guard(st, keeper).Get(ctx, newSecret("vault", "k1", "").Metadata())
	require.NoError(t, err)
	assert.Equal(t, "hunter2", got.(*secret).TypedSpec().Key)
	assert.True(t, p.Subject(keeper).Visible(ctx, "vault", secretType))
	assert.False(t, p.Subject(keeper).Visible(ctx, "elsewhere", secretType), "granted in vault only")
}

// TestA4_DenialsNameIdentityVerbAndResource: the messages of denials.
func TestA4_DenialsNameIdentityVerbAndResource(t *testing.T) {
	ctx := testCtx(t)
	rules := readerWriter()
	rules.Funcs = []access.Func{{Name: "tenants", Func: func(_ context.Context, a access.Access) (access.Effect, string) {
		if a.ID == "forbidden" {
			return access.Deny, "not your tenant"
		}
		return access.Abstain, ""
	}}}
	p, _ := policy(t, rules)
	st := inmem.NewState()
	for _, c := range []struct {
		id   access.Identity
		do   func(state.State) error
		want string
	}{
		{reader, func(s state.State) error { return s.Create(ctx, newLink("network", "eth0", 1500)) },
			"denied: identity uid=1001 has no role granting create on " + linkType + "(network) (resource eth0)"},
		{nobody, func(s state.State) error { _, err := s.List(ctx, resource.NewKind("network", linkType)); return err },
			"denied: identity uid=4242 has no role granting list on " + linkType + "(network)"},
		{writer, func(s state.State) error { return s.Create(ctx, newLink("network", "forbidden", 1)) },
			"denied: identity uid=1002: function tenants denies create on " + linkType + "(network) (resource forbidden): not your tenant"},
		{access.Identity{Transport: access.Certificate, Subject: "CN=x,O=y"}, func(s state.State) error { return s.Destroy(ctx, newLink("n", "a", 0).Metadata()) },
			`denied: identity certificate "CN=x,O=y" has no role granting destroy on ` + linkType + "(n) (resource a)"},
	} {
		err := c.do(p.Guard(st, c.id))
		require.Error(t, err)
		assert.True(t, access.IsDeniedError(err))
		assert.True(t, access.IsDeniedError(fmt.Errorf("wrapped: %w", err)))
		assert.EqualError(t, err, c.want)
	}
	err := p.Subject(nobody).Page(ctx, access.PagePprof)
	assert.EqualError(t, err, "denied: identity uid=4242 has no role granting the pprof pages")
	assert.False(t, access.IsDeniedError(state.NewInvalidError(nil, "x")))
	list, err := st.List(ctx, resource.NewKind("network", linkType))
	require.NoError(t, err)
	assert.Empty(t, list.Items, "nothing written")
}
