// Package remote serves what a resgraph Runtime tells about itself over
// gRPC — explanations of a resource or a controller, the dependency graph,
// the daemon's health, and (when the daemon offers them) recordings of its
// flight recorder and plans of proposed changes — and is the client tools
// use to ask for them.
// It is served beside the remote State (package pkg/state/remote) on a
// daemon's API listener, so that one endpoint answers a CLI's every
// question (resgraphctl's describe, explain, graph and health):
//
//	gs := grpc.NewServer(...)
//	stateremote.NewServer(st, reg).Register(gs)          // the resources
//	remote.NewServer(rt.Observe(), remote.WithHealth(remote.RuntimeHealth(rt.Observe()))).Register(gs)
//	go gs.Serve(lis)
//
//	c := remote.NewClient(conn)
//	x, err := c.Explain(ctx, ptr)                         // explain.Resource
//
// A daemon with a flight recorder and a planner serves them too
// (WithRecorder, WithPlanner), and [FlightClient] asks for them:
//
//	sum, err := remote.NewFlightClient(conn).Record(ctx, 5*time.Minute, file)
//
// This package is a Go module of its own, so that code that embeds
// resgraph without serving it does not depend on gRPC. Its protocol is
// internal/pb/observe.proto and flight.proto: an explanation travels in
// its JSON form (the one the debug handler serves, package
// observe/explain), the graph as its edges, the health as its checks, a
// recording as its file's bytes (docs/recording-format.md), a plan as its
// text. Regenerate the Go code with
// `go generate ./...` (the pinned protoc and plugins are in the module's
// README).
//
// # Rules
//
// OB1. What a client receives is what the served observer answered: an
// explanation equal to the observer's (its JSON form round-trips), the
// dependency graph's edges in the observer's order with their edge types
// and no-writer marks, the health checks as the health function returned
// them.
//
// OB2. Errors keep their classes across the wire: an unknown controller is
// NotFound and the client's error is of the not-found class
// (state.IsNotFoundError); a request naming no resource or controller, or
// an invalid pointer, is InvalidArgument and of the invalid class
// (state.IsInvalidError), refused before the observer is asked. A panic
// of the observer or of the health function ends that call with Internal
// and the server goes on serving.
//
// OB3. Health ([WithHealth]) is served twice, with one answer: by the
// Health call (every check, with its text, which resgraphctl health
// prints) and by the standard gRPC health protocol (grpc.health.v1, for
// probes and load balancers), whose services are "" (SERVING when every
// check passes), "readiness" and "liveness" (SERVING when every check of
// that probe passes); any other service is NotFound for Check and
// SERVICE_UNKNOWN for Watch. A Watch sends the current status at once and
// then each change, asking the health function at the interval of
// [WithHealthWatchInterval]. Without WithHealth neither is served: the
// Health call is Unimplemented and grpc.health.v1 is not registered.
//
// OB4. A recording crosses the wire whole or not at all ([WithRecorder],
// [FlightClient.Record]): the server takes the recorder's window now (a
// duration of 0) or records from now for the duration asked (at most
// recording.MaxRecordFor; a negative or longer one is InvalidArgument),
// writes the whole recording file and sends it in chunks, the last with
// a summary that counts its bytes and what it holds; the client returns
// the summary only once every byte arrived, and ErrRecordingCut when the
// stream ended before. A recorder that has not read the state yet is
// FailedPrecondition; one that started over while recording is Aborted.
//
// OB5. A plan never writes to the daemon ([WithPlanner],
// [FlightClient.Plan]): the server runs the daemon's [PlanFunc] on the
// change file and returns the plan's text, whether the daemon would
// converge (and why not) and its counts; an empty file, and every change
// the PlanFunc refuses as invalid (an unknown type, a controller's
// output, a file that does not parse), is InvalidArgument, of the invalid
// class for the client. A panic of the PlanFunc ends that call with
// Internal.
//
// Without WithRecorder or WithPlanner the service is not registered, and
// a call is Unimplemented.
//
// OB6. A Runtime's health ([RuntimeHealth]) is served as the Runtime
// tells it (observe.HealthOf): readiness passes exactly when the Runtime
// is ready, liveness exactly when it is live; every check the Runtime
// says fails is a failing check named after what it is about ("runtime",
// "controller NAME", "kind TYPE(NS)") with the Runtime's reason, and each
// controller that is ready has a passing readiness check of its own.
//
// # Seams
//
// Access control (issue 31's rules) applies to these calls as to the
// State's: a gRPC interceptor sees the full method names
// (/resgraph.observe.v1.Observer/ExplainResource, ...) and the peer. An
// explanation carries metadata and controller names, never a spec.
package remote
