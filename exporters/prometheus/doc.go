// Package prometheus exports a resgraph engine's metrics to Prometheus, for
// daemons that already serve Prometheus metrics. It is a Go module of its
// own, so that resgraph's core module depends on no Prometheus code.
//
//	reg := prometheus.NewRegistry()
//	if _, err := resgraphprom.Register(reg, engine); err != nil { ... }
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// The [Collector] reads [runtime.Runtime.Metrics] at every scrape (nothing
// is kept between scrapes, nothing is registered globally) and reports, with
// the namespace "resgraph" unless [WithNamespace] says otherwise:
//
//	resgraph_controller_reconciles_total{controller,kind}    counter
//	resgraph_controller_crashes_total{controller,kind}       counter
//	resgraph_controller_restarts_total{controller,kind}      counter
//	resgraph_controller_wakeups_total{controller,kind}       counter
//	resgraph_controller_requeues_total{controller,kind}      counter
//	resgraph_controller_busy_seconds_total{controller,kind}  counter
//	resgraph_controller_queue_length{controller,kind}        gauge
//	resgraph_controller_in_flight{controller,kind}           gauge
//	resgraph_controller_state{controller,kind,state}         gauge, 1 for the current state
//	resgraph_controller_last_error_timestamp_seconds{controller,kind}  gauge (absent without error)
//	resgraph_kind_events_routed_total{namespace,type}        counter
//	resgraph_kind_relists_total{namespace,type}              counter
package prometheus
