// Package debughttp serves a Runtime's debug pages over HTTP: an
// [http.Handler] over the Runtime's [observe.Observer]
// (runtime.Runtime.Observe) that a daemon mounts on a server of its own,
// plus the helpers to listen on loopback and serve until a context is done.
//
//	h := debughttp.New(rt.Observe())
//	ln, err := debughttp.Listen("127.0.0.1:6060") // loopback only
//	...
//	go debughttp.Serve(ctx, ln, h)
//
// Pages (paths relative to where the handler is mounted; it is built for
// the root of a server or an http.StripPrefix):
//
//   - /debug/             an index linking to every page
//   - /debug/vars         expvar: everything published with expvar, the
//     Runtime's metrics included when published with
//     observe.PublishExpvar
//   - /debug/pprof/       the runtime's profiles (heap, goroutine, allocs,
//     block, mutex, threadcreate; ?debug=1 for text), /debug/pprof/profile
//     (CPU, ?seconds=N, default 30), /debug/pprof/trace (execution trace,
//     ?seconds=N, default 1), /debug/pprof/cmdline and /debug/pprof/symbol
//   - /debug/graph        the controller/resource graph: ?format=dot
//     (default), mermaid or json
//   - /debug/graph/live   the graph, live: a node per controller and per
//     resource kind (namespace and type), per-controller state (busy,
//     idle, retrying, crashed, hot loop, standby: see [LiveBusy]), queue
//     depth, reconcile rate, lag and last error, and per-edge rates,
//     computed on the server over [RateWindow] and refreshed every second
//     without a page reload; clicking a node shows its explanation. The
//     page, its script and its style are embedded in the handler (no
//     external network); it polls ?format=json, a [LiveDocument]
//   - /debug/controllers  every controller's state, counters and last
//     error, and the hot loops flagged now: an HTML page, or JSON (a
//     [StatusDocument]) with ?format=json or an Accept header that lists
//     application/json first
//   - /healthz and /readyz  the Runtime's liveness and readiness
//     (observe.Health): 200 with "live" / "ready", or 503 with "not live" /
//     "not ready" and one line per check that fails, naming the controller
//     or the kind and why ("controller LinkApply: catching up with the
//     first listing of its inputs: 2 items due, 1 in flight");
//     ?format=json serves the observe.Health
//
// More pages plug in with [WithPage]: each is a path, a title for the
// index and a handler. Nothing is registered on http.DefaultServeMux, and
// the package does not import net/http/pprof (whose init registers there):
// profiles are served from runtime/pprof and runtime/trace directly.
//
// JSON is named in lowerCamelCase throughout (the status document, the
// Runtime's expvar metrics, the graph); zero times are omitted, never
// written as "0001-01-01T00:00:00Z".
//
// The pages expose profiles and internal state: [Listen] refuses a
// non-loopback address unless [AllowRemote] is given, and [Serve] stops
// the server when its context is done.
//
// # Access control
//
// The handler takes the access rules of package access ([WithAccess]) and
// [Serve] the authenticator that establishes who is at the other end of
// each connection ([WithAuthenticator]: access.PeerCredentials on a unix
// socket, access.MutualTLS on TCP). Each page needs its page group:
// access.PagePprof (profiles, expvar), access.PageExplain (explain, the
// trace), access.PageGraph (the graph, the live graph, the controllers),
// access.PageHealth (the probes); a page added with [WithPage] names its
// own ([Page.Access]). A denial is a 403 whose body names the identity and
// the page, and an audit record. Rules of the package access apply:
//
//   - A1: [Serve] refuses to serve a listener that is not on loopback (nor
//     a unix socket) without an authenticator, unless [Insecure] says so
//     explicitly (then it logs a warning); a peer the authenticator
//     refuses is disconnected before any request is read, and audited.
//   - A2: explain and the trace leave out the resources of sensitive types
//     that the request's subject is not granted by name; the explanation
//     of such a resource is a 403.
package debughttp
