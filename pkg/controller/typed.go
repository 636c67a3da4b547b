package controller

import (
	"github.com/siderolabs/gen/optional"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// InputFor declares the whole kind of the resource type that D defines (in
// its default namespace) as an input of the given kind. D is the resource
// type (InputFor[*Link](InputWeak)) or its definition type.
func InputFor[D typed.DefinitionProvider](kind InputKind) Input {
	k := typed.Kind[D]()
	return Input{Namespace: k.Namespace(), Type: k.Type(), Kind: kind}
}

// InputForID is [InputFor] for the one resource with ID id: the input fires
// for that ID only (rule C2).
func InputForID[D typed.DefinitionProvider](kind InputKind, id resource.ID) Input {
	in := InputFor[D](kind)
	in.ID = optional.Some(id)
	return in
}

// OutputFor declares the resource type that D defines as an output of the
// given kind.
func OutputFor[D typed.DefinitionProvider](kind OutputKind) Output {
	return Output{Type: typed.Kind[D]().Type(), Kind: kind}
}
