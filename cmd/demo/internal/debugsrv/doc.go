// Package debugsrv is the demo's debug HTTP endpoint: expvar, pprof, the
// controller/resource graph and a controller status page, served on a mux of
// its own (never http.DefaultServeMux).
//
// Pages:
//   - /debug/            an index linking to the others
//   - /debug/vars        expvar (everything published with expvar.Publish)
//   - /debug/pprof/      net/http/pprof
//   - /debug/graph       the dependency graph; ?format=dot (default),
//     mermaid or json
//   - /debug/controllers each controller's state: an HTML page, or JSON
//     with ?format=json or "Accept: application/json"
//
// [CheckAddr] refuses non-loopback listen addresses unless told otherwise:
// the endpoint exposes profiles and internal state. [Serve] serves until its
// context is done, then shuts the server down and returns after every
// goroutine it started has exited.
package debugsrv
