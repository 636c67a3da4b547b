// Package prometheus exports a resgraph Runtime's metrics to Prometheus, for
// daemons that already serve Prometheus metrics. It is a Go module of its
// own, so that resgraph's core module depends on no Prometheus code.
//
//	reg := prometheus.NewRegistry()
//	if _, err := resgraphprom.Register(reg, rt.Observe()); err != nil { ... }
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// The [Collector] reads the Runtime's [observe.Observer.Metrics] at every
// scrape (nothing is kept between scrapes, nothing is registered globally)
// and reports, with the namespace "resgraph" unless [WithNamespace] says
// otherwise (family is "controller" or "qcontroller"):
//
//	resgraph_controller_reconciles_total{controller,family}   counter
//	resgraph_controller_crashes_total{controller,family}      counter
//	resgraph_controller_restarts_total{controller,family}     counter
//	resgraph_controller_wakeups_total{controller,family}      counter
//	resgraph_controller_requeues_total{controller,family}     counter
//	resgraph_controller_busy_seconds_total{controller,family} counter
//	resgraph_controller_queue_length{controller,family}       gauge
//	resgraph_controller_in_flight{controller,family}          gauge
//	resgraph_controller_failing_items{controller,family}      gauge (QController items whose last run failed)
//	resgraph_controller_parked_items{controller,family}       gauge (items parked by a retry policy)
//	resgraph_controller_state{controller,family,state}        gauge, 1 for the current state
//	resgraph_controller_last_error_timestamp_seconds{controller,family}  gauge (absent without error)
//	resgraph_controller_queue_wait_seconds{controller,family} histogram
//	resgraph_controller_lag_seconds{controller,family}        histogram (end to end: commit, or the kind's first listing when later → reconcile start)
//	resgraph_controller_startup_seconds{controller,family}    histogram (startup work: first listing → reconcile of what it listed; (re)start → start pass)
//	resgraph_controller_reconcile_duration_seconds{controller,family,outcome}  histogram (ok, error, requeue, panic)
//	resgraph_controller_busy_ratio{controller,family}         gauge, over the last ten seconds
//	resgraph_controller_hot_loop{controller,family}           gauge, 1 while in a flagged hot loop
//	resgraph_controller_hot_loops_total{controller,family}    counter
//	resgraph_controller_leader{controller,family,election}    gauge, with leadership: 1 while this replica leads (runs) it, 0 while standby
//	resgraph_controller_leader_term{controller,family}        gauge, with leadership: the term led (while standby: the last one; 0: none)
//	resgraph_controller_leader_role_since_timestamp_seconds{controller,family}  gauge, with leadership: when it became leader or standby
//	resgraph_kind_events_routed_total{namespace,type}         counter
//	resgraph_kind_relists_total{namespace,type}               counter
//	resgraph_kind_delivery_lag_seconds{namespace,type}        histogram (commit, or the first listing when later → routed)
//	resgraph_trace_missed_records_total                       counter (trace records the hot-loop detector and the trace hook never read)
//	resgraph_hot_loop_dropped_commits_total                   counter (commits the hot-loop detector let go of early to keep its memory bounded)
//	resgraph_hot_loop_incomplete_windows_total                counter (detector windows that counted only part of their commits: missed records, dropped commits)
//
// The histograms have one bucket per power of two from 512 ns to about
// 73 minutes, then +Inf (the Runtime keeps four per power of two; see
// package observe/histogram).
package prometheus
