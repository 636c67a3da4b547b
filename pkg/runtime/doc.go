// Package runtime is the resgraph Runtime: it registers Controllers and
// QControllers ([controller.Controller], [controller.QController]), watches
// their inputs, routes every change to the controllers that declared it, and
// runs their reconcile loops and work queues over a [state.State].
//
//	rt, err := runtime.New(st, logger, runtime.WithCachedResource(ns, typ))
//	...
//	err = rt.RegisterQController(ctrl) // before or during Run
//	...
//	err = rt.Run(ctx) // until ctx is canceled
//
// [New] builds a Runtime and starts nothing; [Runtime.Run] runs every
// controller registered before or during it, until its context is canceled.
// What a controller receives is stated on [Runtime.RegisterController] and
// [Runtime.RegisterQController]; what the Runtime guarantees to every
// controller (routing, access control, consistent reads, watch robustness,
// user code, logs) on [Runtime]. The rules cited (C1–C9, Q1–Q5, E1–E4) are
// stated in docs/controllers-and-runtime.md in the repository.
//
// Replicas of a daemon that share a state (etcd) run each controller in
// exactly one of them with [WithLeadership] (rule E4): one election per
// Runtime or per controller, every write fenced by the leader's term, a
// standby that keeps the inputs watched and takes over when the leader's
// lease expires.
//
// Everything else is behind two doors: [Runtime.Observe] hands out the
// Runtime's observe.Observer (statuses, metrics, the causal trace,
// explanations, hot loops), which package debughttp and the Prometheus
// exporter read; package runtimetest is the test kit (a Runtime for a
// test, its assertions and Settle).
package runtime
