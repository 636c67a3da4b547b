// Package observe is how a Runtime is observed: the [Observer] a Runtime
// hands out (runtime.Runtime.Observe) and the data it returns — controller
// statuses ([ControllerStatus], with their [Lifecycle] and [Family]),
// [Metrics], the [Activity] of the Runtime's parts, hot loops ([HotLoop]) —
// plus [PublishExpvar]. Debug pages (package debughttp), exporters (the
// Prometheus module) and tests take an Observer, so they work with any
// implementation.
//
// The building blocks live in packages of their own, usable without a
// Runtime (offline tools reading a saved trace, for one):
//
//   - [github.com/resgraph/resgraph/pkg/observe/histogram]: fixed
//     log-scale latency histograms, recorded lock-free;
//   - [github.com/resgraph/resgraph/pkg/observe/trace]: the causal trace —
//     the Runtime's records in a bounded ring, their JSON-lines form,
//     followers;
//   - [github.com/resgraph/resgraph/pkg/observe/hotloop]: hot-loop and
//     flapping detection over trace records;
//   - [github.com/resgraph/resgraph/pkg/observe/explain]: the model of an
//     explanation ("why is X not reconciled") and its text, HTML and JSON
//     forms.
package observe
