package access_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/access"
)

const goodRules = `# the readers and the link admin
roles:
  - name: reader
    grants:
      - verbs: [get, list, watch]
        namespaces: ["*"]
        types: ["*"]
    pages: [explain, graph, health]
  - name: link-admin
    grants:
      - verbs: ["*"]
        namespaces: [network]
        types: [links]
  - name: keeper
    grants:
      - verbs: get
        namespaces: vault
        types: Secrets.test.resgraph.dev
bindings:
  - role: reader
    to: [{anyone: true}]
  - role: link-admin
    to:
      - uid: 1002
      - subject: "CN=ops,O=example"
      - user: root
      - group: root
`

func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// TestA5_RuleFileLoads: a rule file's roles and bindings decide as the
// same rules written in Go; a role bound to nothing is a warning at load.
func TestA5_RuleFileLoads(t *testing.T) {
	ctx := testCtx(t)
	core, logs := observer.New(zap.WarnLevel)
	p, err := access.LoadFile(writeFile(t, goodRules), defs(), access.WithLogger(zap.New(core)))
	require.NoError(t, err)
	assert.Equal(t, []string{"reader"}, p.Subject(nobody).Roles())
	assert.Equal(t, []string{"reader", "link-admin"}, p.Subject(writer).Roles())
	assert.Equal(t, []string{"reader", "link-admin"}, p.Subject(access.Identity{Transport: access.UnixPeer, UID: 0, GID: 0}).Roles(), "user root, group root")
	ops := p.Subject(access.Identity{Transport: access.Certificate, Subject: "CN=ops,O=example"})
	assert.True(t, ops.Decide(ctx, access.Destroy, "network", linkType, "x").Allowed)
	assert.False(t, ops.Decide(ctx, access.Destroy, "other", linkType, "x").Allowed)
	assert.True(t, ops.Decide(ctx, access.Get, "other", linkType, "x").Allowed)
	assert.True(t, ops.DecidePage(ctx, access.PageGraph).Allowed)
	assert.False(t, ops.DecidePage(ctx, access.PagePprof).Allowed)
	require.Equal(t, 2, logs.Len())
	assert.Regexp(t, `^access: .*rules.yaml:14: role "keeper" is bound to no identity: it grants nothing$`, logs.All()[0].Message)
	assert.Equal(t, "access: type "+secretType+": no bound role's grant reaches it (it is sensitive: only a grant naming it reaches it)", logs.All()[1].Message)
	for i, w := range p.Warnings() {
		assert.Equal(t, "access: "+w, logs.All()[i].Message)
	}
}

// TestA5_UnreachableTypesWarn: a type no bound role reaches is a warning,
// a sensitive one included when only a wildcard would reach it.
func TestA5_UnreachableTypesWarn(t *testing.T) {
	p, err := access.NewPolicy(defs(), access.Rules{
		Roles:    []access.Role{{Name: "r", Grants: []access.Grant{{Verbs: []access.Verb{access.Get}, Namespaces: []string{"*"}, Types: []string{"*"}}}}},
		Bindings: []access.Binding{{Role: "r", To: []access.Match{access.Anyone()}}},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"type " + secretType + ": no bound role's grant reaches it (it is sensitive: only a grant naming it reaches it)"}, p.Warnings())
}

// TestA5_BadRuleFilesAreRefusedWithTheirLine: every problem of a file is
// reported as file:line: problem, and nothing is loaded.
func TestA5_BadRuleFilesAreRefusedWithTheirLine(t *testing.T) {
	for name, c := range map[string]struct{ text, want string }{
		"does not parse":   {"roles: []\n\tbindings: []\n", ":2: found character that cannot start any token"},
		"not a mapping":    {"- a\n", ":1: want a mapping with keys [roles bindings]"},
		"empty":            {"", ":1: the file is empty"},
		"unknown key":      {"roles: []\nbinding: []\n", `:2: unknown key "binding" (known: [roles bindings])`},
		"unknown verb":     {"roles:\n  - name: r\n    grants:\n      - verbs: [get, delete]\n        namespaces: [a]\n        types: [links]\n", `:4: unknown verb "delete": use get, list, watch, create, update, teardown, destroy, or "*" for every verb`},
		"unknown type":     {"roles:\n  - name: r\n    grants:\n      - verbs: [get]\n        namespaces: [a]\n        types:\n          - links\n          - Pods\n", `:8: unknown type "Pods" (neither a registered type nor an alias of one)`},
		"bad wildcard":     {"roles:\n  - name: r\n    grants:\n      - verbs: [get]\n        namespaces: [a*b]\n        types: [links]\n", `:5: namespace: "a*b": a wildcard is "*", or one "*" at the start or the end of a name`},
		"unknown page":     {"roles:\n  - name: r\n    pages: [explain, metrics]\n", `:3: unknown page "metrics"`},
		"missing types":    {"roles:\n  - name: r\n    grants:\n      - verbs: [get]\n        namespaces: [a]\n", ":4: a grant without types"},
		"role unnamed":     {"roles:\n  - grants: []\n", ":2: name is missing"},
		"bad uid":          {"roles:\n  - name: r\nbindings:\n  - role: r\n    to:\n      - uid: alice\n", `:6: uid: want a number, not "alice"`},
		"unknown user":     {"roles:\n  - name: r\nbindings:\n  - role: r\n    to:\n      - user: no-such-user-here\n", ":6: user: user: unknown user no-such-user-here"},
		"two keys":         {"roles:\n  - name: r\nbindings:\n  - role: r\n    to:\n      - {uid: 1, gid: 2}\n", ":6: want one identity per item"},
		"unknown identity": {"roles:\n  - name: r\nbindings:\n  - role: r\n    to:\n      - email: a@b\n", `:6: unknown key "email"`},
		"unknown role":     {"roles:\n  - name: r\nbindings:\n  - role: writer\n    to: [{uid: 1}]\n", `:4: a binding of unknown role "writer"`},
		"bound to nobody":  {"roles:\n  - name: r\nbindings:\n  - role: r\n    to: []\n", `:4: the binding of role "r" binds it to nobody`},
		"role twice":       {"roles:\n  - name: r\n  - name: r\n", `:3: role "r" is defined twice`},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, c.text)
			p, err := access.LoadFile(path, defs())
			require.Error(t, err)
			assert.Nil(t, p)
			assert.Contains(t, err.Error(), path+c.want)
		})
	}
	_, err := access.LoadFile(filepath.Join(t.TempDir(), "absent.yaml"), defs())
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestA5_EveryProblemIsReported: a file with several problems names each.
func TestA5_EveryProblemIsReported(t *testing.T) {
	path := writeFile(t, "roles:\n  - name: r\n    grants:\n      - verbs: [fly]\n        namespaces: [a]\n        types: [Pods]\n")
	_, err := access.LoadFile(path, defs())
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":4: unknown verb \"fly\"")
	assert.Contains(t, err.Error(), path+":6: unknown type \"Pods\"")
}
