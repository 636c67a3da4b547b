package resource_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestLabels_KeysAndDo: Keys lists the keys sorted; Do edits a temporary
// copy whose reads see the edits so far, and applies them on return; a
// panic in its function leaves the labels as they were.
func TestLabels_KeysAndDo(t *testing.T) {
	md := resource.NewMetadata("ns", "t", "id", resource.VersionUndefined)
	assert.Nil(t, md.Labels().Keys())
	md.Labels().Set("b", "2")
	md.Labels().Set("a", "1")
	assert.Equal(t, []string{"a", "b"}, md.Labels().Keys())

	md.Labels().Do(func(temp resource.TempKV) {
		temp.Set("c", "3")
		temp.Delete("a")
		v, ok := temp.Get("c")
		assert.True(t, ok)
		assert.Equal(t, "3", v)
		_, ok = md.Labels().Get("c")
		assert.False(t, ok, "the edit is not applied before Do returns")
	})
	assert.Equal(t, map[string]string{"b": "2", "c": "3"}, md.Labels().Raw())

	assert.Panics(t, func() {
		md.Labels().Do(func(temp resource.TempKV) {
			temp.Delete("b")
			panic("boom")
		})
	})
	assert.Equal(t, map[string]string{"b": "2", "c": "3"}, md.Labels().Raw())

	md.Annotations().Do(func(temp resource.TempKV) { temp.Set("note", "x") })
	assert.Equal(t, []string{"note"}, md.Annotations().Keys())
	md.Labels().Do(func(temp resource.TempKV) { temp.Delete("b"); temp.Delete("c") })
	assert.Equal(t, 0, md.Labels().Len())
	assert.True(t, md.Labels().Equal(resource.Labels{}))
}
