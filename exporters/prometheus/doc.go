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
//	resgraph_controller_failing_items{controller,kind}       gauge (QController items whose last run failed)
//	resgraph_controller_parked_items{controller,kind}        gauge (items parked by a retry policy)
//	resgraph_controller_state{controller,kind,state}         gauge, 1 for the current state
//	resgraph_controller_last_error_timestamp_seconds{controller,kind}  gauge (absent without error)
//	resgraph_controller_queue_wait_seconds{controller,kind}  histogram
//	resgraph_controller_lag_seconds{controller,kind}         histogram (end to end: commit → reconcile start)
//	resgraph_controller_reconcile_duration_seconds{controller,kind,outcome}  histogram (ok, error, requeue, panic)
//	resgraph_controller_busy_ratio{controller,kind}          gauge, over the last ten seconds
//	resgraph_controller_hot_loop{controller,kind}            gauge, 1 while in a flagged hot loop
//	resgraph_controller_hot_loops_total{controller,kind}     counter
//	resgraph_kind_events_routed_total{namespace,type}        counter
//	resgraph_kind_relists_total{namespace,type}              counter
//	resgraph_kind_delivery_lag_seconds{namespace,type}       histogram (commit → routed)
//
// The histograms have one bucket per power of two from 1.024 µs to about
// 137 s (the engine keeps four per power of two; see package
// observe/histogram).
package prometheus
