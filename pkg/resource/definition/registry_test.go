package definition_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource/definition"
)

func linkDef() definition.Definition {
	return definition.Definition{
		Type:             "Links.net.resgraph.dev",
		DefaultNamespace: "network",
		Aliases:          []string{"links", "link"},
		Encoding:         "json",
		Columns:          []definition.Column{{Name: "MTU", Path: ".mtu"}},
	}
}

func TestResolve_TypeAndAliasesIgnoringCase(t *testing.T) {
	var reg definition.Registry
	require.NoError(t, reg.Add(linkDef()))
	for _, name := range []string{"links", "LINK", "Links.net.resgraph.dev", "links.NET.resgraph.dev"} {
		d, err := reg.Resolve(name)
		require.NoError(t, err, name)
		assert.Equal(t, "Links.net.resgraph.dev", d.Type)
	}
	_, err := reg.Resolve("routes")
	var unknown *definition.UnknownNameError
	require.ErrorAs(t, err, &unknown)
	assert.Equal(t, []string{"Links.net.resgraph.dev"}, unknown.Known)
	assert.Contains(t, err.Error(), `"routes"`)
}

func TestAdd_RefusesNamesOfAnotherType(t *testing.T) {
	var reg definition.Registry
	require.NoError(t, reg.Add(linkDef()))
	other := definition.Definition{Type: "LinkStatuses.net.resgraph.dev", Aliases: []string{"Link"}}
	err := reg.Add(other)
	require.ErrorContains(t, err, `the name "Link" is already a name of "Links.net.resgraph.dev"`)
	_, ok := reg.Get(other.Type)
	assert.False(t, ok, "nothing registered")

	// A type that is the alias of another.
	require.ErrorContains(t, reg.Add(definition.Definition{Type: "LINKS"}), "already a name of")
}

func TestAdd_SameDefinitionAgainIsNoOpAnotherIsRefused(t *testing.T) {
	var reg definition.Registry
	require.NoError(t, reg.Add(linkDef()))
	require.NoError(t, reg.Add(linkDef()))
	changed := linkDef()
	changed.Sensitive = true
	require.ErrorContains(t, reg.Add(changed), "registered already with another definition")
	assert.Equal(t, 1, reg.Len())
}

func TestValidate_NamesWhatIsWrong(t *testing.T) {
	for name, tc := range map[string]struct {
		d    definition.Definition
		want string
	}{
		"empty type":       {definition.Definition{}, "empty resource type"},
		"blank alias":      {definition.Definition{Type: "T", Aliases: []string{"a b"}}, `alias "a b" is empty or has white space`},
		"empty alias":      {definition.Definition{Type: "T", Aliases: []string{""}}, `alias "" is empty`},
		"alias twice":      {definition.Definition{Type: "T", Aliases: []string{"x", "X"}}, `alias "X" given twice`},
		"alias is type":    {definition.Definition{Type: "T", Aliases: []string{"t"}}, `alias "t" given twice`},
		"unnamed column":   {definition.Definition{Type: "T", Columns: []definition.Column{{Path: ".a"}}}, "a column without a name"},
		"column twice":     {definition.Definition{Type: "T", Columns: []definition.Column{{Name: "A", Path: ".a"}, {Name: "A", Path: ".b"}}}, `column "A" given twice`},
		"bad column path":  {definition.Definition{Type: "T", Columns: []definition.Column{{Name: "A", Path: "a"}}}, `column "A": path "a" does not start with '.'`},
		"bad column index": {definition.Definition{Type: "T", Columns: []definition.Column{{Name: "A", Path: ".a[x]"}}}, `index "x"`},
	} {
		t.Run(name, func(t *testing.T) {
			var reg definition.Registry
			require.ErrorContains(t, reg.Add(tc.d), tc.want)
			assert.Zero(t, reg.Len())
		})
	}
}

func TestColumnValue_PathsIntoTheSpec(t *testing.T) {
	var spec any
	require.NoError(t, json.Unmarshal([]byte(`{"mtu":1500,"up":true,"name":"eth0","link":{"name":"br0"},
		"addresses":["10.0.0.1/24","fe80::1/64"],"routes":[{"gw":"10.0.0.254"}],"nothing":null}`), &spec))
	for path, want := range map[string]string{
		".mtu":           "1500",
		".up":            "true",
		".name":          "eth0",
		".link.name":     "br0",
		".addresses[1]":  "fe80::1/64",
		".routes[0].gw":  "10.0.0.254",
		".addresses":     `["10.0.0.1/24","fe80::1/64"]`,
		".missing":       "",
		".addresses[5]":  "",
		".name.x":        "",
		".nothing":       "",
		".routes[0].gw2": "",
	} {
		assert.Equal(t, want, definition.Column{Name: "C", Path: path}.Value(spec), path)
	}
	assert.Equal(t, `{"a":1}`, definition.Column{Name: "C", Path: "."}.Value(map[string]any{"a": 1}))
}

func TestSensitive_AllocatesNothing(t *testing.T) {
	var reg definition.Registry
	secret := definition.Definition{Type: "Keys.sec.resgraph.dev", Sensitive: true}
	require.NoError(t, reg.Add(secret))
	require.NoError(t, reg.Add(linkDef()))
	assert.True(t, reg.Sensitive(secret.Type))
	assert.False(t, reg.Sensitive(linkDef().Type))
	assert.False(t, reg.Sensitive("unknown"))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = reg.Sensitive(secret.Type) }))
}

func TestGet_ReturnsACopy(t *testing.T) {
	var reg definition.Registry
	require.NoError(t, reg.Add(linkDef()))
	d, _ := reg.Get(linkDef().Type)
	d.Aliases[0] = "changed"
	d.Columns[0].Name = "changed"
	again, _ := reg.Get(linkDef().Type)
	assert.True(t, again.Equal(linkDef()))
	all := reg.All()
	require.Len(t, all, 1)
	assert.True(t, all[0].Equal(linkDef()))
}

type provider struct{ d definition.Definition }

func (p provider) ResourceDefinition() definition.Definition { return p.d }

type panicky struct{}

func (panicky) ResourceDefinition() definition.Definition { panic("boom") }

func TestOf_FillsFromTheRegistrationAndChecksTheProvider(t *testing.T) {
	d, err := definition.Of("T", "ns", "json", provider{definition.Definition{Aliases: []string{"ts"}, Sensitive: true}})
	require.NoError(t, err)
	assert.True(t, d.Equal(definition.Definition{Type: "T", DefaultNamespace: "ns", Encoding: "json", Aliases: []string{"ts"}, Sensitive: true}))

	d, err = definition.Of("T", "ns", "own", struct{}{})
	require.NoError(t, err)
	assert.True(t, d.Equal(definition.Definition{Type: "T", DefaultNamespace: "ns", Encoding: "own"}))

	_, err = definition.Of("T", "ns", "json", provider{definition.Definition{Type: "U"}})
	require.ErrorContains(t, err, `names type "U"`)
	_, err = definition.Of("T", "ns", "json", provider{definition.Definition{DefaultNamespace: "other"}})
	require.ErrorContains(t, err, `names default namespace "other"`)
	_, err = definition.Of("T", "ns", "json", panicky{})
	require.ErrorContains(t, err, "ResourceDefinition panicked: boom")
}
