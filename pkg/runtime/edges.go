package runtime

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
)

// edgeCounts returns the traffic along the edges of the controller name
// (tel: its sink): what was delivered through each declared input, then
// its writes for each declared output type, one entry per namespace
// written. Nil with metrics off.
func (r *Runtime) edgeCounts(name string, tel *telemetry.Controller) []observe.EdgeCount {
	if !r.tel.Metrics {
		return nil
	}
	var out []observe.EdgeCount
	for _, in := range r.db.InputCounts(name) {
		id, _ := in.Input.ID.Get()
		out = append(out, observe.EdgeCount{
			EdgeType:  controller.InputEdgeType(in.Input.Kind).String(),
			Namespace: in.Input.Namespace, Type: in.Input.Type, ID: id,
			Count: in.Routed,
		})
	}
	outputs := r.db.Outputs(name)
	for _, w := range tel.Writes() {
		for _, o := range outputs {
			if o.Type == w.Kind.Type() {
				out = append(out, observe.EdgeCount{
					EdgeType:  controller.OutputEdgeType(o.Kind).String(),
					Namespace: w.Kind.Namespace(), Type: o.Type,
					Count: w.Count,
				})
				break
			}
		}
	}
	return out
}
