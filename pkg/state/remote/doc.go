// Package remote serves a resgraph state.State over gRPC and makes a
// state.State of a connection to such a server: a daemon exposes its
// resources to CLIs, and a controller runs in another process against the
// daemon's state, through the same contract as in process.
//
//	srv := remote.NewServer(st, reg)                // st: the daemon's state
//	gs := grpc.NewServer(srv.GRPCServerOptions()...)
//	srv.Register(gs)
//	go gs.Serve(lis)                                // a unix socket, or TCP with TLS
//
//	conn, _ := grpc.NewClient("unix:///run/daemon/api.sock", ...)
//	st, err := remote.NewClient(conn, reg)          // a state.State
//
// A daemon whose API others reach serves it with [Serve] instead, which
// authenticates every connection and decides every call by access rules
// (package access: rules A1-A7): [WithAuthenticator] with
// access.PeerCredentials on a unix socket or access.MutualTLS on TCP, and
// a policy; without one Serve refuses to start unless [Insecure] says so
// (and logs a warning). The State's accesses are served from the state
// guarded for the connection's identity; another service's calls need
// the page [WithPages] maps them to. A denial is a PermissionDenied status
// whose message names the identity, the verb and the resource, and the
// client's error is of the access-denied class (access.IsDeniedError).
//
//	err := remote.Serve(ctx, lis, func(r grpc.ServiceRegistrar) { srv.Register(r) },
//		remote.WithAuthenticator(access.PeerCredentials(), policy),
//		remote.WithGRPCOptions(srv.GRPCServerOptions()...))
//
// This package is a Go module of its own, so that code that embeds
// resgraph without serving it does not depend on gRPC. Its protocol is
// internal/pb/state.proto: a resource travels as its metadata in fields
// and its spec as the bytes of the codec's encoding plus the encoding's
// format, so client and server must register each type in their codec
// registries with the same encoding; the client decodes specs with its own
// registry. Regenerate the Go code with `go generate ./...` (the pinned
// protoc and plugins are in the module's README).
//
// # Rules
//
// N1. Every rule of the state contract (R, S) holds for a client:
// conformance.StateSuite and conformance.RuntimeSuite pass with the state
// served over loopback TCP and over a unix socket. The client implements
// the core (Get, List, Create, Update, Destroy and the three watches) on
// the wire; the other methods of state.State are state.WrapCore's, built
// on them (a Modify is a Get and an Update, retried on conflicts), and
// state.KindHeadReporter and state.RevisionReporter are asked of the
// server (so are the revisions of reads and events; a served state that
// cannot answer makes the client answer with errors.ErrUnsupported). Errors keep their classes
// across the wire, both ways: the server puts the classes of the served
// state's error in the status's details, and the client's [*Error] belongs
// to the same classes (state.IsConflictError holds on the client for a
// conflict on the server, and so on), with a gRPC code by class:
//
//	not found                                   NotFound
//	conflict (version)                          Aborted
//	owner, phase conflict, pending finalizers   FailedPrecondition
//	fenced                                      FailedPrecondition
//	invalid (bad input, unknown type, bad spec) InvalidArgument
//	buffer overrun, bookmark unknown            OutOfRange
//
// A status without details (from an interceptor, an access-control
// denial) reaches the client as it is — a watch's too, when the server
// ended the call before reading its request: status.Code and
// status.FromError see it, InvalidArgument is of the invalid class and OutOfRange of the
// buffer-overrun class. Bad input is refused by the client before
// anything is sent (an invalid identity, a type its registry does not
// know, a resource that does not encode, a shared snapshot given to
// Update), and again by the server before the state is called.
//
// Snapshots (S7): the resources of watch events are shared by every watch
// of one client — a client decodes a version once, and every watch that
// receives it gets the same object — and Update refuses one of them (any
// frozen resource: every object a watch hands out is) as a local state
// refuses its shared snapshots. The client keeps the newest version of
// each resource its watches of a kind received, and the one before it
// while the kind has more than one watch. Get and List return new
// objects, read-only option or not.
//
// N2. A watch whose call breaks (the connection drops, the server stops)
// resumes: the client opens a new call from the bookmark of the last event
// it delivered, with backoff ([WithReconnectBackoff]) until the server is
// back, and the server's state resumes right after that event — so no
// change is lost (for a slow watcher, as S12 defines it), none is repeated
// and the order is kept. Bootstrap contents are delivered once the
// Bootstrapped event arrived, all at once, so that a call that breaks
// during the bootstrap starts it again with nothing delivered twice; a
// watch that broke before delivering anything starts again as it was
// asked. When the server cannot resume from the bookmark — the daemon
// restarted and its state does not know it, or its history moved on past
// it — the watch ends with an Errored event whose error is of the
// bookmark-unknown class ([IsBookmarkUnknownError], also a buffer
// overrun): it never re-lists silently. A watch also ends, with an Errored
// event, when the server refuses to resume it for another reason or the
// connection is closed; it ends silently when its context is done (S13).
//
// N3. A client that reads slowly, or never, stalls no writer and grows no
// memory without bound. A watch's events flow under credits: the server
// sends a message of at most 32 events only when the client granted it,
// and a client grants at most two ahead, one more each time it handed a
// message's events to its watcher. So at most 2 messages and 8 events wait
// for a watcher that does not read; the served state's watch then waits,
// and the state coalesces what it has not delivered (S12), whatever the
// gRPC flow-control windows. The server bounds the watches one connection
// may have open ([WithMaxWatchesPerConnection]; one more is
// ResourceExhausted) and the size of its messages ([WithMaxMessageSize]:
// List and Watch split their answers below it, a single resource larger
// than it is ResourceExhausted naming it); requests larger than the gRPC
// server's receive bound (given by [Server.GRPCServerOptions]) are refused
// by gRPC with ResourceExhausted.
//
// N4. A malformed request — no pointer or kind, an empty identity, an
// unknown phase or label operation, an ID regular expression that does
// not compile, a type the server's registry does not know, a spec format
// the type does not decode, a spec that does not decode, a watch request
// that mixes a pointer with a kind or bootstrap contents with a bookmark,
// a CheckWrite of no write or of two —
// is refused with InvalidArgument naming what is wrong, before the state
// is called: nothing is written. A panic while serving a call ends that
// call with Internal; every other call goes on. A client that vanishes
// mid-call leaves nothing behind: its calls' contexts end, and with them
// the served state's watches and every goroutine of the call.
//
// N5. A write can be checked without being made (a dry run): a client
// made with [WithDryRun] sends its Create and Update as CheckWrite calls,
// which the server serves with the code of the write itself — the
// request's checks (N4), the spec's strict decoding, the access rules
// (the guarded state decides the write and audits it, the record's
// outcome saying that nothing was written; a denial is the write's own)
// — down to the served state, where the checks that state makes before
// such a write run instead of the write: the state stores the kind, the
// resource is valid, and against the stored version a Create of a
// resource that exists is a conflict, an Update of one that does not is
// not found, and a stale version or incarnation, another owner or
// another phase than expected are refused as the states' own Updates
// refuse them. The answer is the error the write would meet, with its
// code and classes, or success; nothing is written either way, and the
// caller's resource is left as it was. A check that passed does not
// reserve anything: a write made later can still meet a concurrent
// writer's change (a conflict) or a failure of the state's storage. A
// dry-run client refuses Destroy before sending anything, and a server
// without CheckWrite answers Unimplemented: a dry run never writes.
//
// # Seams
//
// Access control (authentication of callers, rules per identity) plugs in
// with [WithCallState]: for each call the server asks it for the state to
// serve, given the call's context (its peer and credentials), and an error
// carrying a gRPC status — PermissionDenied — ends the call with that
// status. The state it returns may refuse single accesses the same way:
// an error with a GRPCStatus method reaches the client with its status.
//
// Tools that print resources of types they were not compiled with ask the
// server for its resource definitions ([Definitions]: names, aliases,
// columns, sensitivity, from the server's codec registry), and read,
// watch and write those types as [Unstructured] resources (a client made
// with [WithUnstructured]): the server renders their specs as JSON, which
// the definitions' columns read, and decodes the JSON a client writes
// into its own type. Watches of them resume like any other.
//
// The server decodes the spec of every write strictly
// (codec.Registry.DecodeSpecInput): a JSON key the registered spec type
// has no field for, or that names a field only by a different case, is
// an InvalidArgument naming the key's path and the type (a
// *codec.UnknownFieldError on the server's side), and nothing is written,
// so a typo in a spec a user wrote is refused rather than dropped. What a
// state stored is read leniently, keys the type no longer has dropped.
//
// # Costs
//
// A client is cheap: NewClient contacts nobody and starts nothing, and a
// watch is one gRPC stream and one goroutine on each side (two on the
// server's: the sender and the reader of grants). The server encodes a
// change delivered to many watchers once: its watchers receive the same
// snapshot (S7), and the server keeps the wire form of the snapshots it
// encoded last (a table of 1024 entries) for the others. The benchmarks
// beside the code measure the allocations per watch event, per fan-out
// to 16 watchers and per List item.
package remote
