// Package runtime is the resgraph engine: it registers Controllers and
// QControllers ([controller.Controller], [controller.QController]), watches
// their inputs, routes every change to the controllers that declared it, and
// runs their reconcile loops and work queues over a [state.State].
//
// This doc states what the engine guarantees; the methods state their
// own contracts ([Runtime.RegisterController] lists what registration
// refuses). How the engine does it is written beside the code, in its
// internal packages.
//
// # Lifecycle (rules E1, E3)
//
// [New] builds an engine and starts nothing. Controllers are registered
// before or during [Runtime.Run]; a controller registered during Run starts
// at once and receives the current state of its inputs like any other. Run
// starts everything and returns nil once every goroutine it started has
// exited, promptly after its context is canceled for controllers that
// honour their context; it may be called once. Registration after Run
// returned fails.
//
// # Routing (rules C2, C9, Q1, Q4)
//
// Every change of a declared input kind reaches every controller that
// declared it, in the order the state applied the changes:
//
//   - a Controller input wakes the controller (wake-ups coalesce);
//   - an input with an ID only fires for that ID;
//   - InputDestroyReady and InputQMappedDestroyReady fire only for the
//     controller's own outputs (owner = controller name) that are tearing
//     down with no finalizers; the destruction itself does not fire them;
//   - InputQPrimary queues the changed pointer; InputQMapped queues a map
//     item that calls MapInput and queues the pointers it returns.
//
// A QController's queue starts with every existing resource of each primary
// input (of its ID, for an input with an ID), and a map item for every
// existing resource of each mapped input (for a mapped destroy-ready input,
// every own output that is already tearing down with no finalizers, so that
// none is left behind when the engine restarts) — each existing resource
// once, whether the QController was registered before Run or during it.
// Each input kind is watched once, from the start of the first controller
// that declares it until Run ends, whoever else declares it later; a large
// kind delays only the controllers that declare it.
//
// # Controllers (rules C2, C6, C7, C8)
//
// Run is called on a goroutine of its own. It receives one ReconcileEvent at
// start (and at every restart), once its inputs are watched, and one after
// changes to its inputs; changes that arrive while an event waits to be
// taken coalesce into it. Resources that exist at the start are not
// changes. Run that returns an error or panics (the panic is logged with its
// stack; the rest of the engine keeps running) is restarted after an
// exponential backoff: [WithRestartBackoff] initial delay, doubling without
// jitter, capped at its max (by default 100 ms, capped at 1 min);
// ResetRestartBackoff starts over from the initial delay. Run returning nil before the engine stops ends the
// controller without a restart.
//
// UpdateInputs validates and replaces the dynamic inputs (the declared ones
// stay): changes of the new inputs flow at once, reads of them are allowed,
// and the controller is woken, once the new kinds are watched, so that it
// sees their current state. The inputs are a set (order and duplicates do
// not matter): replacing them with an equal set changes nothing and wakes
// nobody, so a controller may call UpdateInputs on every pass. Kinds are
// not unwatched during a Run.
//
// StartTrackingOutputs starts a pass; CleanupOutputs(kinds) then tears down
// every output of those kinds owned by the controller and not written
// (Create, Update, Modify — even a Modify that changed nothing) since, and
// destroys it when it has no finalizers. An output with finalizers is left
// tearing down; a later CleanupOutputs destroys it once they are gone
// (controllers typically declare their outputs as InputDestroyReady to be
// woken then). CleanupOutputs before StartTrackingOutputs is an
// invalid-class error.
//
// # QControllers (rules Q1–Q5)
//
// Each QController has a work queue and Concurrency workers (default 1). The
// same pointer is never reconciled twice at once, nor reconciled and mapped
// at once: when a kind is both a primary and a mapped input (qtransform's
// WithExtraMappedInput of its own input type, for one), Reconcile(p) and
// MapInput(p) of one pointer p are serialized, the second waiting for the
// first (it keeps its place, without a delay); a pointer queued while
// waiting is stored once, and one queued while in flight runs once more
// afterwards. A Reconcile (or MapInput) error retries the item with a
// per-item exponential backoff ([WithQueueBackoff]); a
// [controller.RequeueError] requeues it after its interval (logged as a
// failure only when it wraps an error; a negative interval is a failure);
// success resets the item's backoff; a new change to an item waiting out a
// backoff runs it at once. A panic in Reconcile or MapInput fails that item
// only and is logged with its stack. MapInput returning a pointer that is
// not of a primary input kind (or nil, or without an ID) fails the item (the
// valid pointers are still queued); the offending pointer is logged once per
// kind (nil pointers: once). The initial List of an input kind that fails
// (a QController registered during Run lists its inputs) is retried with
// the item backoff.
//
// A QController may set its own retry policy by implementing
// [controller.RetryPolicyProvider] (see [controller.RetryPolicy]; the zero
// policy is the behaviour above): its own backoff bounds; MaxAttempts, after
// which a failing item is parked — not retried, logged ("reconcile failed;
// parked until the item changes"), listed with its last error in its
// status (observe.ControllerStatus.Parked) and still failing — until its
// next change queues it as a fresh item; and ChangeAbandonsRetry, with which
// a change to a failing item starts its attempts and backoff over.
//
// # User code
//
// Everything the engine calls that it did not write is user code: a
// controller's methods, the error it returns (Error, Unwrap, As; a
// RequeueError's Interval), the pointers MapInput returns, the resources
// and errors a State delivers (Metadata, DeepCopy; the State's own methods,
// for a foreign State). The engine never calls user code while it holds a
// lock of its own, and always inside a recovery: a panic fails only what
// called it — a Controller's Run (restarted), a QController item (retried),
// a kind watch (re-established with a re-list), a QController's initial
// list (retried) — and is logged with the stack of the panicking
// goroutine. An error is rendered to its text once; logs and statuses carry
// the text, so a panicking Error method is a failure like any other
// ("error of type T: Error panicked: ...").
//
// A typed-nil error — a nil pointer in a non-nil error interface, such as
// `var err *MyError; return err` — is a failure, never a success: it is
// almost always a bug, and treating it as nil would hide it. Its message
// names the type: "Run returned a typed-nil error (*pkg.MyError)",
// "Reconcile T(ns/id): returned a typed-nil error (*controller.RequeueError)".
// An error chain holding a typed-nil *controller.RequeueError is a failure
// too.
//
// A watch event that cannot be routed — a change without a resource, a
// resource whose Metadata panics or returns nil, a resource of another kind
// or with an empty ID — fails the kind's watch like an Errored event (see
// "Watch robustness"): routing around it could lose the change it stood
// for.
//
// # Access control (rules C3, C4, C5)
//
// Controllers reach the state only through their runtime, which checks
// every call:
//
//   - reads (Get, ContextWithTeardown) on declared inputs (an input with
//     an ID covers that ID only) and on the controller's output types in
//     any namespace; List on input kinds declared without an ID and on
//     output types;
//   - writes (Create, Update, Modify, ModifyWithResult, Teardown, Destroy)
//     on declared output types only, always as the controller: the owner is
//     the controller's name (none with WithCreateNoOwner or
//     WithModifyNoOwner; the owner given with controller.WithOwner for
//     Teardown and Destroy), so writing a shared output another controller
//     owns is the state's owner conflict (a Create of a resource that exists
//     with another owner is reported as an owner conflict too, which is
//     still a conflict);
//   - finalizers (AddFinalizer, RemoveFinalizer) on strong inputs,
//     QController primary inputs, and outputs the controller owns.
//
// A refused call writes nothing and returns an error that names the
// controller, the operation and the resource;
// [controller.IsAccessDeniedError] tells it apart. Bad arguments (nil or empty pointers) are
// invalid-class errors.
//
// # Read your writes and consistent reads
//
// A controller always reads its own writes. With [WithCachedResource] a
// kind's reads are served from an in-memory copy fed by the kind's watch
// (before the watch bootstrapped, from the state).
//
// Over a state that numbers its changes ([state.RevisionReporter], as
// inmem does), every read through a controller's runtime, cached or not,
// obeys this, for every kind:
//
//   - Floor. A read reflects the state at a revision R (the resources of the
//     kind read are those of the state at R: every change of the kind up to
//     R, none after) with R at or after the controller's floor: the
//     revision of its own last write (of any kind, by any of its
//     goroutines, that returned before the read started) and of every
//     change routed to it before the read started — in particular the
//     change that woke the Controller or queued the QController item being
//     reconciled. So a resource destroyed before the change that woke a
//     controller is never read as existing, and a controller never reads a
//     kind older than its own last write.
//   - Told revision. [state.WithGetRevision] / [state.WithListRevision] on a
//     read store R. Reads of several kinds are not taken at one revision
//     (each is at its own R, each at or after the floor); a controller that
//     needs one cut compares their revisions and reads again.
//
// A cached read is served from the cache when the cache is at the floor or
// later, or when the state confirms (its KindRevision) that the kind has no
// change the cache lacks; otherwise it goes to the state. A cache never
// makes a read wait for its watch.
//
// Over a state that does not number its changes, reads report revision 0,
// and the cache guarantees less: a controller reads its own writes at once,
// and a cached resource never goes back to an older version; a cached read
// may lag changes made by others.
//
// A cached kind may have custom indexes ([WithIndex]: a function from a
// resource to keys): a controller lists the resources under one key with
// [controller.IndexReader] (safe.ReaderListByIndex), reading only those.
// A List by index returns exactly what a List of the kind filtered by the
// index function would, under every change (label changes and destructions
// included) and the controller's own writes.
//
// # Watch robustness
//
// A kind watch that fails — the call fails or panics, an Errored event
// (such as a buffer overrun from a foreign State) arrives, an event cannot
// be routed (see "User code"), or the stream is closed — never stops the
// engine: a warning is logged, the re-list is counted, and the watch is
// re-established with a fresh bootstrap after a short backoff. What changed
// while it was down is routed then, exactly: the resources that changed
// meanwhile, and those that disappeared, as destroyed; an unchanged
// resource is not routed again.
//
// [Runtime.Relist] does the same on demand (a daemon that suspects its
// view, after an outside event): it re-lists a watched kind, routes what
// differs, and returns once every controller affected has been woken or
// has its items queued; the re-list is counted with the others.
//
// # Logs
//
// The engine logs its own messages through the logger given to [New], with
// a "controller" (or "kind") field, and never attaches zap's automatic
// stack traces to them, whatever the logger's configuration (zap's
// development preset adds one from WARN up): a failure the engine retries
// is logged at WARN with the error's text and the delay of the retry —
// "reconcile failed; retrying after backoff" (fields item, error,
// backoff), "MapInput failed; ...", "...; requeued after the interval"
// (interval), "controller failed; restarting after backoff", "initial list
// of an input failed; ...", "kind watch failed; re-listing" (retry_in). A
// panic is a bug, not a transient failure: it is logged at ERROR with the
// panic's value and the stack of the panicking goroutine as the "stack"
// field. A MapInput returning a pointer of an undeclared kind is logged at
// ERROR once per kind. By default the engine has no retry budget: it never
// gives up on an item or a controller; only a QController's
// RetryPolicy.MaxAttempts parks an item until its next change.
//
// # Observability
//
// [Runtime.Observe] hands out the engine's [observe.Observer]: every
// controller's status (its state, last error and recovery, its queue and
// failing items, tracked with metrics off too) and metrics, every watched
// kind's counters, the engine's activity, its hot loops, its causal trace
// and explanations ("why is this resource (not) reconciled"). Debug pages
// (package debughttp), exporters and tests take the Observer; package
// observe publishes it to expvar (observe.PublishExpvar) under a name of the
// caller's choosing. Each engine keeps its own counters (two engines never
// share any; nothing is registered globally): cheap atomics and latency
// histograms (fixed log-scale buckets, recorded without locks or
// allocation), on by default, skipped with WithMetrics(false).
//
// The engine records what it does in a bounded, always-on causal trace
// (sized by [WithTrace], trace.DefaultSize events by default, 0 = off):
// each commit with its writer, each change routed to a controller, each
// reconcile's start with the changes that caused it and its end, QController
// retries and requeues with their due times, crashes, restarts and
// finalizer waits. [WithTraceHook] streams it out. A running engine reads
// it every 100 ms to detect hot loops: a controller re-triggered mostly by
// its own writes, or controllers that keep rewriting each other's inputs,
// at a sustained rate (see package observe/hotloop for the defaults,
// [WithHotLoop] to tune them). A loop is logged at WARN (its controllers,
// resources and cycle), listed by the Observer, and flagged in each of its
// controllers' status.
//
// The quiescence checks of tests (wait until every change is routed and no
// controller has work due) are in package runtimetest (WaitIdle, Settle).
//
// The rules cited here are stated in docs/controllers-and-engine.md in the repository.
package runtime
