// Package routed is a [state.State] that serves each namespace from a
// backend of its own (rule P1): a daemon keeps most of its resources in
// memory (rebuilt at every boot), its configuration and identity in a
// file, and some in a shared store, behind the one State its Runtime runs
// over.
//
//	mem := inmem.NewState()
//	file, err := boltdb.Open("/var/lib/mydaemon/config.db", reg)
//	...
//	st, err := routed.New([]routed.Rule{
//		routed.Exact("config", file),
//		routed.Prefix("identity.", file),
//	}, routed.WithDefault(mem))
//	rt, err := runtime.New(st, logger)
//
// # Rules
//
// A rule covers one namespace ([Exact]) or every namespace that begins
// with a prefix ([Prefix]); the default backend ([WithDefault]) serves the
// namespaces no rule covers. Rules never overlap: two rules covering a
// namespace in common (the same name twice, a name and a prefix of it, two
// prefixes one of which begins the other) are refused by [New], naming
// both, whatever their backends. Without a default, a namespace no rule
// covers is refused: by New when [WithNamespaces] names it, by
// ValidateType (so by the Runtime when a controller declaring it registers),
// and by every call with an invalid-class error naming the rules. Several
// rules may name one backend. Bad input (a nil or empty pointer, resource
// or kind) is answered by the default backend, or the first rule's, with
// its own invalid-class error.
//
// # What holds where
//
// Every call is the call of the backend that serves its namespace, with
// the same arguments, and every kind lives in exactly one backend. So each
// backend's rules hold for its namespaces as they do without routing:
// the per-kind and per-resource rules of package state (S1–S14: versions,
// owners, phases, finalizers and teardown, snapshots, watches, bookmarks,
// the order of a kind's changes) hold in every namespace, and the
// backend's own promises (durability, encryption, sharing with other
// processes) are those of its namespaces: a write to a namespace in
// memory is gone after a restart, one to a namespace in a file is kept.
// conformance.StateSuite and conformance.RuntimeSuite pass over a routed
// state whose namespaces are split across backends.
//
// Across namespaces that live in different backends (checked by
// conformance.CrossBackendSuite):
//
//   - There is no revision shared by the backends' changes. Over several
//     backends, Revision and KindRevision ([state.RevisionReporter]) fail
//     with an error matching [errors.ErrUnsupported] (over a single
//     backend they are its answers). The Runtime then serves its controllers'
//     consistent reads as over a state that does not number its changes
//     (it keeps its own writes until their watch delivers them), so a
//     controller whose inputs and outputs live in several backends still
//     reads its own writes in each. The revisions that events and reads
//     report ([state.Event].Revision, [state.WithGetRevision],
//     [state.WithListRevision]) are their backend's: compare them only
//     between namespaces of one backend.
//   - There is no order between changes of different backends: a watcher
//     of two kinds in two backends receives each kind's changes in its
//     order, and the two streams in no particular order to each other.
//     No write spans two backends: there is no atomicity across them.
//   - A bookmark is its kind's backend's, and resumes only there.
//   - [State.KindHead] ([state.KindHeadReporter]) is the answer of the
//     kind's backend; ValidateType ([state.TypeValidator]) too, after the
//     namespace check above.
//   - A fence ([state.Fencer]) is checked only when every backend checks
//     it: a backend that ignores fences (memory) would let a deposed leader
//     write, so CheckFence refuses leadership over such a mix.
//   - Snapshots ([state.SnapshotTracker]): each backend watches its own;
//     a change one finds is raised by that backend's report.
//
// The routed state starts no goroutine and holds no lock: its backends
// are the caller's, to open before and to close after its last use.
package routed
