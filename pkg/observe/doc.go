// Package observe is how an engine is observed: the [Observer] an engine
// hands out (runtime.Runtime.Observe) and the data it returns — controller
// statuses ([ControllerStatus], with their [State] and [Family]),
// [Metrics], the [Activity] of the engine's parts, hot loops ([HotLoop]) —
// plus [PublishExpvar]. Debug pages (package debughttp), exporters (the
// Prometheus module) and tests take an Observer, so they work with any
// implementation.
//
// The building blocks live in packages of their own, usable without an
// engine (offline tools reading a saved trace, for one):
//
//   - [github.com/resgraph/resgraph/pkg/observe/histogram]: fixed
//     log-scale latency histograms, recorded lock-free;
//   - [github.com/resgraph/resgraph/pkg/observe/busy]: saturation, the
//     busy fraction of a controller or a pool of workers;
//   - [github.com/resgraph/resgraph/pkg/observe/trace]: the causal trace —
//     engine events in a bounded ring, their JSON-lines form, followers;
//   - [github.com/resgraph/resgraph/pkg/observe/hotloop]: hot-loop and
//     flapping detection over trace events;
//   - [github.com/resgraph/resgraph/pkg/observe/explain]: the model of an
//     explanation ("why is X not reconciled") and its text, HTML and JSON
//     forms.
package observe
