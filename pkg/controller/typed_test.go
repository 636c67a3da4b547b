package controller_test

import (
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

type declSpec struct{}
type declDef struct{}

func (declDef) Definition() typed.Definition {
	return typed.Definition{Type: "Decls.test.resgraph.dev", DefaultNamespace: "decls"}
}

type decl = typed.Resource[declSpec, declDef]

func TestTypedDeclarations(t *testing.T) {
	assert.Equal(t, controller.Input{Namespace: "decls", Type: "Decls.test.resgraph.dev", Kind: controller.InputStrong},
		controller.InputFor[*decl](controller.InputStrong))
	assert.Equal(t, controller.Input{Namespace: "decls", Type: "Decls.test.resgraph.dev", ID: optional.Some("x"), Kind: controller.InputWeak},
		controller.InputForID[declDef](controller.InputWeak, "x"))
	assert.Equal(t, controller.Output{Type: "Decls.test.resgraph.dev", Kind: controller.OutputShared},
		controller.OutputFor[*decl](controller.OutputShared))
}
