package adapter

import (
	"fmt"
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TestAccess_ScopesOfFewAndManyKinds: a controller's scope answers the
// same whether it declared few kinds (found by comparison) or more than
// fewKinds (found in a map, including the kinds declared before the
// switch): every declared input is readable and only those, finalizers
// only on strong and primary inputs, an input with an ID covers that ID
// alone, and every declared output type, in any namespace.
func TestAccess_ScopesOfFewAndManyKinds(t *testing.T) {
	for _, n := range []int{2, fewKinds, fewKinds + 3} {
		t.Run(fmt.Sprint(n, " kinds"), func(t *testing.T) {
			var ins []controller.Input
			var outs []controller.Output
			for i := range n {
				in := controller.Input{Namespace: "ns", Type: resource.Type(fmt.Sprint("In", i)), Kind: controller.InputWeak}
				switch i % 3 {
				case 1:
					in.Kind = controller.InputStrong
				case 2:
					in.ID = optional.Some(resource.ID("only"))
				}
				ins = append(ins, in)
				outs = append(outs, controller.Output{Type: resource.Type(fmt.Sprint("Out", i)), Kind: controller.OutputExclusive})
			}
			a := NewAccess(ins, nil, outs)
			assert.Equal(t, n > fewKinds, a.reads.many != nil, "a map past fewKinds")
			for i, in := range ins {
				ptr := func(id resource.ID) resource.Pointer { return resource.NewPointer("ns", in.Type, id) }
				assert.True(t, a.canRead(ptr("only")), "input %d", i)
				assert.Equal(t, i%3 != 2, a.canRead(ptr("other")), "input %d, another ID", i)
				assert.Equal(t, i%3 != 2, a.canList(resource.NewKind("ns", in.Type)), "input %d listed", i)
				assert.Equal(t, i%3 == 1, a.finalizerInput(ptr("other")), "input %d finalizers", i)
				assert.False(t, a.canRead(resource.NewPointer("other-ns", in.Type, "only")), "input %d in another namespace", i)
				assert.False(t, a.canReadUncached(ptr("only")), "input %d uncached", i)
				out := resource.Type(fmt.Sprint("Out", i))
				assert.True(t, a.isOutput(out), "output %d", i)
				assert.True(t, a.canRead(resource.NewPointer("any", out, "x")), "output %d read in any namespace", i)
			}
			assert.False(t, a.isOutput("In0"))
			assert.False(t, a.canRead(resource.NewPointer("ns", "Undeclared", "x")))
		})
	}
}
