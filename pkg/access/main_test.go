package access_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The test types: links (plain) and secrets (sensitive).
type linkSpec struct {
	MTU int `json:"mtu"`
}

type linkDef struct{}

const (
	linkType   = "Links.test.resgraph.dev"
	secretType = "Secrets.test.resgraph.dev"
)

func (linkDef) Definition() typed.Definition {
	return typed.Definition{Type: linkType, DefaultNamespace: "network"}
}

func (linkDef) ResourceDefinition() definition.Definition {
	return definition.Definition{Aliases: []string{"links", "link"}}
}

type secretSpec struct {
	Key string `json:"key"`
}

type secretDef struct{}

func (secretDef) Definition() typed.Definition {
	return typed.Definition{Type: secretType, DefaultNamespace: "vault"}
}

func (secretDef) ResourceDefinition() definition.Definition {
	return definition.Definition{Aliases: []string{"secrets", "secret"}, Sensitive: true}
}

type (
	link   = typed.Resource[linkSpec, linkDef]
	secret = typed.Resource[secretSpec, secretDef]
)

func newLink(ns, id string, mtu int) *link {
	return typed.New[linkSpec, linkDef](resource.NewMetadata(ns, linkType, id, resource.VersionUndefined), linkSpec{MTU: mtu})
}

func newSecret(ns, id, key string) *secret {
	return typed.New[secretSpec, secretDef](resource.NewMetadata(ns, secretType, id, resource.VersionUndefined), secretSpec{Key: key})
}

// defs returns the definitions of the test types.
func defs() *definition.Registry {
	reg := codec.NewRegistry()
	codec.MustRegister[linkSpec, linkDef](reg)
	codec.MustRegister[secretSpec, secretDef](reg)
	return reg.Definitions()
}

// Identities of the tests.
var (
	reader = access.Identity{Transport: access.UnixPeer, UID: 1001, GID: 1001}
	writer = access.Identity{Transport: access.UnixPeer, UID: 1002, GID: 100}
	nobody = access.Identity{Transport: access.UnixPeer, UID: 4242, GID: 4242}
)

// readerWriter are rules with a reader of everything (not sensitive), a
// writer of links in namespace network, and a keeper of secrets.
func readerWriter() access.Rules {
	return access.Rules{
		Roles: []access.Role{
			{Name: "reader", Grants: []access.Grant{{Verbs: []access.Verb{access.Get, access.List, access.Watch}, Namespaces: []string{"*"}, Types: []string{"*"}}},
				Pages: []access.Page{access.PageExplain}},
			{Name: "writer", Grants: []access.Grant{{Verbs: access.AllVerbs, Namespaces: []string{"network"}, Types: []string{"links"}}}},
			{Name: "keeper", Grants: []access.Grant{{Verbs: access.AllVerbs, Namespaces: []string{"vault"}, Types: []string{"secrets"}}}},
		},
		Bindings: []access.Binding{
			{Role: "reader", To: []access.Match{access.UID(1001), access.GID(100)}},
			{Role: "writer", To: []access.Match{access.UID(1002)}},
			{Role: "keeper", To: []access.Match{access.CertCommonName("keeper")}},
		},
	}
}

// policy compiles rules over the test types, auditing every read to the
// returned logs.
func policy(t testing.TB, rules access.Rules, opts ...access.PolicyOption) (*access.Policy, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	p, err := access.NewPolicy(defs(), rules, append([]access.PolicyOption{access.WithAudit(zap.New(core)), access.WithReadSampling(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return p, logs
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
