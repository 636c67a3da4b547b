package controller_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/controller"
)

func TestDependencyEdgeType_String(t *testing.T) {
	for want, et := range map[string]controller.DependencyEdgeType{
		"OutputExclusive":          controller.EdgeOutputExclusive,
		"OutputShared":             controller.EdgeOutputShared,
		"InputStrong":              controller.EdgeInputStrong,
		"InputWeak":                controller.EdgeInputWeak,
		"InputDestroyReady":        controller.EdgeInputDestroyReady,
		"InputQPrimary":            controller.EdgeInputQPrimary,
		"InputQMapped":             controller.EdgeInputQMapped,
		"InputQMappedDestroyReady": controller.EdgeInputQMappedDestroyReady,
		"DependencyEdgeType(8)":    controller.EdgeInputQMappedDestroyReady + 1,
		"DependencyEdgeType(-1)":   controller.DependencyEdgeType(-1),
	} {
		t.Run(want, func(t *testing.T) {
			assert.Equal(t, want, et.String())
		})
	}
}

// TestDependencyEdgeType_Values pins the numeric values: they are part of
// the contract's iota order.
func TestDependencyEdgeType_Values(t *testing.T) {
	assert.Equal(t, []controller.DependencyEdgeType{0, 1, 2, 3, 4, 5, 6, 7}, []controller.DependencyEdgeType{
		controller.EdgeOutputExclusive, controller.EdgeOutputShared,
		controller.EdgeInputStrong, controller.EdgeInputWeak, controller.EdgeInputDestroyReady,
		controller.EdgeInputQPrimary, controller.EdgeInputQMapped, controller.EdgeInputQMappedDestroyReady,
	})
}

func TestDependencyEdgeType_IsOutput(t *testing.T) {
	for et, want := range map[controller.DependencyEdgeType]bool{
		controller.EdgeOutputExclusive:          true,
		controller.EdgeOutputShared:             true,
		controller.EdgeInputStrong:              false,
		controller.EdgeInputWeak:                false,
		controller.EdgeInputDestroyReady:        false,
		controller.EdgeInputQPrimary:            false,
		controller.EdgeInputQMapped:             false,
		controller.EdgeInputQMappedDestroyReady: false,
	} {
		t.Run(et.String(), func(t *testing.T) {
			assert.Equal(t, want, et.IsOutput())
		})
	}
}

func TestInputEdgeType(t *testing.T) {
	for name, tc := range map[string]struct {
		kind controller.InputKind
		want controller.DependencyEdgeType
	}{
		"weak":                   {controller.InputWeak, controller.EdgeInputWeak},
		"strong":                 {controller.InputStrong, controller.EdgeInputStrong},
		"destroy-ready":          {controller.InputDestroyReady, controller.EdgeInputDestroyReady},
		"Q primary":              {controller.InputQPrimary, controller.EdgeInputQPrimary},
		"Q mapped":               {controller.InputQMapped, controller.EdgeInputQMapped},
		"Q mapped destroy-ready": {controller.InputQMappedDestroyReady, controller.EdgeInputQMappedDestroyReady},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, controller.InputEdgeType(tc.kind))
			assert.False(t, controller.InputEdgeType(tc.kind).IsOutput())
		})
	}
}

func TestOutputEdgeType(t *testing.T) {
	assert.Equal(t, controller.EdgeOutputExclusive, controller.OutputEdgeType(controller.OutputExclusive))
	assert.Equal(t, controller.EdgeOutputShared, controller.OutputEdgeType(controller.OutputShared))
}

// TestDependencyEdge_Compare: rule E2's order — controller name, edge
// type, namespace, type, ID — each deciding only on a tie of the ones
// before it; equal edges compare 0.
func TestDependencyEdge_Compare(t *testing.T) {
	base := controller.DependencyEdge{ControllerName: "b", EdgeType: controller.EdgeInputWeak, ResourceNamespace: "n", ResourceType: "T", ResourceID: "i"}
	assert.Equal(t, 0, base.Compare(base))
	for name, bigger := range map[string]func(*controller.DependencyEdge){
		"controller": func(e *controller.DependencyEdge) {
			e.ControllerName = "c"
			e.EdgeType = controller.EdgeOutputExclusive
			e.ResourceType = "A"
		},
		"edge type": func(e *controller.DependencyEdge) {
			e.EdgeType = controller.EdgeInputDestroyReady
			e.ResourceNamespace = "a"
		},
		"namespace": func(e *controller.DependencyEdge) { e.ResourceNamespace = "o"; e.ResourceType = "A" },
		"type":      func(e *controller.DependencyEdge) { e.ResourceType = "U"; e.ResourceID = "a" },
		"ID":        func(e *controller.DependencyEdge) { e.ResourceID = "j" },
	} {
		b := base
		bigger(&b)
		assert.Equal(t, -1, base.Compare(b), name)
		assert.Equal(t, 1, b.Compare(base), name)
	}
}
