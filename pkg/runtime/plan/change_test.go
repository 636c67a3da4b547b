package plan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
	"github.com/resgraph/resgraph/pkg/state"
)

// getPrinted is what `resgraphctl get notes -o yaml` prints of two notes:
// "---" separated documents of metadata (with the stored resource's
// version, owner, phase, times and finalizers) and spec.
const getPrinted = `metadata:
    namespace: plan
    type: Notes.test.resgraph.dev
    id: a
    version: 3
    phase: running
    created: 2026-11-29T21:00:00Z
    updated: 2026-11-29T21:00:01Z
    labels:
        k: v
    finalizers:
        - echoer
spec:
    n: 5
---
metadata:
    namespace: other
    type: Notes.test.resgraph.dev
    id: b
    version: 1
    owner: someone
    phase: running
spec:
    n: 7
`

// getPrintedJSON is what `resgraphctl get notes -o json` prints of the
// same notes: JSON documents one after the other.
const getPrintedJSON = `{
  "metadata": {"namespace": "plan", "type": "Notes.test.resgraph.dev", "id": "a", "version": 3, "phase": "running",
    "created": "2026-11-29T21:00:00Z", "labels": {"k": "v"}, "finalizers": ["echoer"]},
  "spec": {"n": 5}
}
{
  "metadata": {"namespace": "other", "type": "Notes.test.resgraph.dev", "id": "b", "version": 1, "owner": "someone", "phase": "running"},
  "spec": {"n": 7}
}
`

// TestParseChange_ReadsResourcesAsGetPrintsThem: a change file may be
// what resgraphctl get -o yaml (or -o json) prints, one resource or
// several, each one to set with its labels and spec (the rest of its
// metadata is the stored resource's), beside a change's entries; a
// document that is neither is a *DocumentError of the invalid class,
// naming the document and its keys.
func TestParseChange_ReadsResourcesAsGetPrintsThem(t *testing.T) {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NSpec, NoteDef](reg))
	for name, file := range map[string]string{
		"yaml": getPrinted, "json": getPrintedJSON,
		"yaml and a change": getPrinted + "---\nremove: [{type: notes.test.resgraph.dev, id: c}]\n",
	} {
		c, err := plan.ParseChange(strings.NewReader(file), reg)
		require.NoError(t, err, name)
		require.Len(t, c.Set, 2, name)
		assert.Equal(t, "Notes.test.resgraph.dev(plan/a)", resource.PointerString(c.Set[0].Metadata()), name)
		assert.Equal(t, 5, c.Set[0].(*Note).TypedSpec().N, name)
		v, _ := c.Set[0].Metadata().Labels().Get("k")
		assert.Equal(t, "v", v, name)
		assert.Empty(t, *c.Set[0].Metadata().Finalizers(), "%s: the stored resource's finalizers are not the change's", name)
		assert.Equal(t, "Notes.test.resgraph.dev(other/b)", resource.PointerString(c.Set[1].Metadata()), name)
		assert.Equal(t, 7, c.Set[1].(*Note).TypedSpec().N, name)
		assert.Empty(t, c.Set[1].Metadata().Owner(), name)
	}

	for file, want := range map[string]string{
		getPrinted + "---\nkind: Note\nname: c\n": "document 3 is neither a change (set, remove) nor a resource as resgraphctl get prints it (metadata, spec): its keys are kind, name",
		"sett: []":   "document 1 is neither a change (set, remove) nor a resource as resgraphctl get prints it (metadata, spec): its keys are sett",
		"- a list\n": "document 1 is neither a change (set, remove) nor a resource as resgraphctl get prints it (metadata, spec): not a mapping",
	} {
		_, err := plan.ParseChange(strings.NewReader(file), reg)
		assert.True(t, state.IsInvalidError(err), "%v is of the invalid class", err)
		var de *plan.DocumentError
		require.True(t, errors.As(err, &de), "%v", err)
		assert.EqualError(t, de, want)
	}

	hidden := strings.Replace(getPrinted, "spec:\n    n: 5", "spec: '<hidden: Notes.test.resgraph.dev is sensitive; --show-sensitive prints it>'", 1)
	_, err := plan.ParseChange(strings.NewReader(hidden), reg)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, "document 1: Notes.test.resgraph.dev(a): the spec is hidden")
	_, err = plan.ParseChange(strings.NewReader(strings.Replace(getPrinted, "    version: 1\n", "    version: 1\n    colour: blue\n", 1)), reg)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, "document 2: ")
}

// TestParseChange_RefusesASpecKeyTheTypeHasNot: a spec key the spec type
// has no field for, or one matching a field only by case, is a
// *codec.UnknownFieldError of the invalid class naming the entry, the
// key's path and the type, in a change's set and in a resource document;
// the exact key is read.
func TestParseChange_RefusesASpecKeyTheTypeHasNot(t *testing.T) {
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NSpec, NoteDef](reg))
	for file, want := range map[string]string{
		"set: [{type: notes.test.resgraph.dev, namespace: plan, id: a, spec: {n: 1, bogus: 2}}]": "set[0]",
		"set: [{type: notes.test.resgraph.dev, namespace: plan, id: a, spec: {N: 1}}]":           "set[0]",
		strings.Replace(getPrinted, "    n: 7", "    n: 7\n    bogus: 1", 1):                     "document 2",
	} {
		_, err := plan.ParseChange(strings.NewReader(file), reg)
		assert.True(t, state.IsInvalidError(err), "%v is of the invalid class", err)
		var ufe *codec.UnknownFieldError
		require.True(t, errors.As(err, &ufe), "%s: %v", file, err)
		assert.Contains(t, err.Error(), want)
		assert.Contains(t, err.Error(), ufe.Path)
		assert.Contains(t, err.Error(), "plan_test.NSpec")
	}
	_, err := plan.ParseChange(strings.NewReader("set: [{type: notes.test.resgraph.dev, namespace: plan, id: a, spec: {n: 1}}]"), reg)
	assert.NoError(t, err)
}
