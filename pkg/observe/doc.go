// Package observe holds the engine's observability building blocks, each in
// a package of its own so that code outside the engine (debug pages,
// exporters, offline tools reading a saved trace) can use them without the
// engine:
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
