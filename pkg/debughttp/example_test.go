package debughttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

type (
	NumberSpec struct{ N int }
	NumberDef  struct{}
	Number     = typed.Resource[NumberSpec, NumberDef]
	SquareSpec struct{ N int }
	SquareDef  struct{}
	Square     = typed.Resource[SquareSpec, SquareDef]
)

func (NumberDef) Definition() typed.Definition {
	return typed.Definition{Type: "Numbers.example.resgraph.dev", DefaultNamespace: "default"}
}

func (SquareDef) Definition() typed.Definition {
	return typed.Definition{Type: "Squares.example.resgraph.dev", DefaultNamespace: "default"}
}

// A Runtime's debug pages, mounted on a server of the daemon's own (here
// a test server on loopback): the controller/resource graph, in Mermaid.
// A daemon serves the handler with debughttp.Listen and debughttp.Serve.
func ExampleNew() {
	// The Numbers are written by the user: an outside writer.
	numbers := resource.NewKind("default", "Numbers.example.resgraph.dev")
	rt, err := runtime.New(inmem.NewState(), zap.NewNop(), runtime.WithOutsideWriters(numbers))
	if err != nil {
		panic(err)
	}
	err = rt.RegisterController(transform.NewController(transform.Settings[*Number, *Square]{
		Name: "Squarer",
		MapMetadataFunc: func(n *Number) *Square {
			return typed.NewDefault[SquareSpec, SquareDef](n.Metadata().ID(), SquareSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, n *Number, s *Square) error {
			s.TypedSpec().N = n.TypedSpec().N * n.TypedSpec().N
			return nil
		},
	}))
	if err != nil {
		panic(err)
	}

	srv := httptest.NewServer(debughttp.New(rt.Observe()))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/debug/graph?format=mermaid")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Status)
	fmt.Print(string(body))
	// Output:
	// 200 OK
	// flowchart LR
	// 	c0_Squarer["Squarer"]
	// 	r0_Numbers_example_resgraph_dev[("Numbers.example.resgraph.dev")]
	// 	r1_Squares_example_resgraph_dev[("Squares.example.resgraph.dev")]
	// 	c0_Squarer ==> r1_Squares_example_resgraph_dev
	// 	r0_Numbers_example_resgraph_dev -.->|"default (weak, outside writer)"| c0_Squarer
	// 	r1_Squares_example_resgraph_dev -->|"default (destroy-ready)"| c0_Squarer
	// 	linkStyle 2 stroke:red,color:red
}
