package manifest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/manifest"
	"github.com/resgraph/resgraph/pkg/resource/definition"
)

func defs(t *testing.T) *definition.Registry {
	reg := definition.NewRegistry()
	require.NoError(t, reg.Add(definition.Definition{Type: "Links.test", DefaultNamespace: "net", Aliases: []string{"link", "links"}}))
	require.NoError(t, reg.Add(definition.Definition{Type: "Global.test"}))
	return reg
}

func TestRead_DocumentsAsGetPrintsThem(t *testing.T) {
	in := `metadata:
    namespace: other
    type: links
    id: eth0
    version: 7
    phase: running
    created: 2026-11-29T10:00:00Z
    labels: {a: "1"}
    finalizers: [X]
spec:
    MTU: 1500
    Names: {1: one}
---
{"metadata": {"type": "Link", "id": "eth1"}}
`
	rs, err := manifest.Read(strings.NewReader(in), "f.yaml", defs(t))
	require.NoError(t, err)
	require.Len(t, rs, 2)
	md := rs[0].Metadata()
	assert.Equal(t, []string{"other", "Links.test", "eth0"}, []string{md.Namespace(), md.Type(), md.ID()})
	assert.Equal(t, "undefined", md.Version().String(), "the daemon's metadata is ignored")
	assert.True(t, md.Finalizers().Empty())
	v, _ := md.Labels().Get("a")
	assert.Equal(t, "1", v)
	assert.JSONEq(t, `{"MTU":1500,"Names":{"1":"one"}}`, string(rs[0].SpecJSON()))
	assert.Equal(t, "net", rs[1].Metadata().Namespace(), "the type's default namespace")
	assert.JSONEq(t, `{}`, string(rs[1].SpecJSON()))
}

func TestRead_BadDocumentsNameTheProblem(t *testing.T) {
	for in, want := range map[string]string{
		"":                                       "f.yaml: no resource in it",
		"spec: {}\n":                             "document 1: no metadata",
		"metadata: {id: x}\n":                    "document 1: metadata.type is missing",
		"metadata: {type: link}\n":               "document 1: metadata.id is missing",
		"metadata: {type: nope, id: x}\n":        `metadata.type: definition: no resource type is named "nope"`,
		"metadata: {type: Global.test, id: x}\n": "metadata.namespace is missing, and Global.test has no default namespace",
		"metadata: {type: link, id: x, owner: C}\n":                                                     `metadata.owner is "C"`,
		"metadata: {type: link, id: x}\n---\nmetadata: [\n":                                             "document 2: not a resource document",
		"metadata: {type: link, id: x}\nextra: 1\n":                                                     "document 1: not a resource document: line 2: field extra not found",
		"metadata: {type: link, id: x}\nspec: '<hidden: T is sensitive; --show-sensitive prints it>'\n": "placeholder of a hidden sensitive spec",
	} {
		_, err := manifest.Read(strings.NewReader(in), "f.yaml", defs(t))
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
		assert.True(t, strings.HasPrefix(err.Error(), "f.yaml: "), err.Error())
		assert.NotContains(t, err.Error(), "\n")
	}
}

// TestReadDocs_ABadDocumentDoesNotStopTheOthers: a document that is not a
// resource, or names an unknown type, is returned with its error and the
// documents after it are read; one that is not YAML ends the file.
func TestReadDocs_ABadDocumentDoesNotStopTheOthers(t *testing.T) {
	in := "metadata: {type: nope, id: x}\n---\nmetadata: {type: link, id: a}\nextra: 1\n---\nmetadata: {type: link, id: b}\n---\nmetadata: [\n---\nmetadata: {type: link, id: c}\n"
	docs, err := manifest.ReadDocs(strings.NewReader(in), "f.yaml", defs(t))
	require.NoError(t, err)
	require.Len(t, docs, 4)
	for i, d := range docs {
		assert.Equal(t, "f.yaml", d.File)
		assert.Equal(t, i+1, d.Index)
	}
	assert.ErrorContains(t, docs[0].Err, `f.yaml: document 1: metadata.type: definition: no resource type is named "nope"`)
	assert.ErrorContains(t, docs[1].Err, "f.yaml: document 2: not a resource document: line 4: field extra not found")
	require.NoError(t, docs[2].Err)
	assert.Equal(t, "b", docs[2].R.Metadata().ID())
	assert.ErrorContains(t, docs[3].Err, "f.yaml: document 4: not a resource document")
}
