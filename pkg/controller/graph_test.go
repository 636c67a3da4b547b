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
