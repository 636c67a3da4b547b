package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource/typed"
)

type listSpec struct {
	Links []string `json:"links,omitempty"`
}

type listDef struct{}

func (listDef) Definition() typed.Definition {
	return typed.Definition{Type: "Lists.test.resgraph.dev", DefaultNamespace: "plan"}
}

func lists(links ...string) *typed.Resource[listSpec, listDef] {
	return typed.NewDefault[listSpec, listDef]("r", listSpec{Links: links})
}

// TestPL4_AListEmptiedOrFilledIsDiffedElementByElement: an update that
// removes a list's last element (the list then left out of the JSON form)
// or adds a first one is diffed as one that removes or adds another: the
// element, not the list; a creation prints the list whole.
func TestPL4_AListEmptiedOrFilledIsDiffedElementByElement(t *testing.T) {
	assert.Equal(t, []FieldChange{{Path: "spec.links", Before: "eth1"}}, fields(lists("eth0", "eth1"), lists("eth0")))
	assert.Equal(t, []FieldChange{{Path: "spec.links", Before: "eth0"}}, fields(lists("eth0"), lists()))
	assert.Equal(t, []FieldChange{{Path: "spec.links", After: "eth0"}, {Path: "spec.links", After: "eth1"}}, fields(lists(), lists("eth0", "eth1")))
	assert.Equal(t, []FieldChange{{Path: "spec.links", After: `["eth0","eth1"]`}}, fields(nil, lists("eth0", "eth1")))
}
