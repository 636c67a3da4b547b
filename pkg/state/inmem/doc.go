// Package inmem is the in-memory [state.State] of resgraph: the default,
// embedded backend. [NewState] serves every namespace; it obeys rules
// S1–S15 of the state contract, and the guarantees below.
//
// # Storage and concurrency
//
// Each kind (namespace and type) has its own store, lock, history and
// watchers, so writers of one kind never wait for writers or watchers of
// another. Every method is safe for concurrent use (S14). List returns
// resources sorted by ID (S12a), in an order built once and then brought
// up to date by the next List with the creates and destroys since (the
// new IDs sorted among themselves and merged in), not sorted again.
//
// # Snapshots (S7)
//
// A write (Create, Update, and the Modify family built on them) copies
// the caller's resource exactly once; that copy is the version's
// immutable snapshot, which the store, the history and every event of the
// version share. Watch events carry the snapshots themselves: one object
// per change for all watchers (bootstrap, tail, live and coalesced events
// alike), never copied per watcher. A receiver never changes an event's
// Resource or Old. Get and List return private copies the caller may
// change; with [state.WithReadOnlyGet] and [state.WithReadOnlyList] they
// return the snapshots, at no copy cost, under the same never-change
// rule. Update given a snapshot itself (the state tells by identity) is
// refused with an invalid-class error: DeepCopy it and update the copy.
// To change a resource you read, let Modify copy it for you:
//
//	err := st.Modify(ctx, link, func(r resource.Resource) error {
//		r.(*Link).TypedSpec().MTU = 9000 // a private copy
//		return nil
//	})
//
// The mutation detector ([WithMutationDetector]) checks that nobody
// changes a snapshot: on by default in test binaries, where a change
// panics with a [*MutationError] naming the resource, the changed part and
// both values. It keeps a reference copy of every version it watches and
// compares the snapshot with it: when the resource is next written or
// destroyed (the replaced version, and the one before it while the
// history keeps the change that replaced that one: the two the latest
// event carries), and a last time when the change that replaced the
// version leaves the history. A check reports a change when the metadata
// (identity, version, phase, owner, times, labels, annotations,
// finalizers) or the spec differs from the reference copy's: spec values
// are compared as reflect.DeepEqual does, except that a NaN equals a NaN
// and a func equals the same function, and never by the spec's own Equal
// method. A change made after the last check of its version, or to a
// snapshot of a state that is no longer written to, is not reported: a
// state has no final moment to check in. A version found changed is
// reported once.
//
// A reader that hands the snapshots on (the Runtime, to its controllers)
// tells the state whom it handed which ([state.SnapshotTracker]); the
// state then also watches the last version of a destroyed resource until
// the destroy leaves the history. A change of a snapshot so handed is
// reported naming its holders ([MutationError].Holders), and is raised by
// a holder in its own goroutine rather than by the writer that found it:
// the holder asks for the check of what it was handed when it is done
// with it (CheckHanded), and a change a write finds first is given to the
// first holder that takes it (SnapshotChanged); when none does, the
// writer raises it as usual.
//
// Its cost per write: one more copy (the reference copy, kept as long as
// the version: the history holds about twice the memory), and at most two
// comparisons, plus one per change that leaves the history. A comparison
// reads the two copies once: a typed resource's plain data (byte slices,
// numbers, arrays and structs of them) is compared in bulk
// ([typed.Resource.Identical]) and only its strings, pointers, slices,
// maps and interfaces are followed, allocating nothing but for maps and
// interfaces; the reflection that names a change runs only when the
// memory differs (other resources' specs are always compared by
// reflection). No comparison
// runs under the kind's lock, and none depends on how many versions
// watchers hold. docs/performance.md has the figures. Benchmarks turn the
// detector off (RESGRAPH_MUTATION_DETECTOR=0, as make bench does).
//
// # The production guard
//
// Outside test binaries the detector is off and the guard is on
// ([WithMutationGuard]; RESGRAPH_MUTATION_DETECTOR=0 turns both off, =1
// the detector on, =guard the guard, in a test binary too). It is the detector on a sample of the versions: a
// kind keeps a reference copy of the first of every 128 writes (the others
// cost a counter increment), checked as the detector checks its own
// (docs/performance.md has the cost). It tracks no holders: a change it
// finds goes to the report given with [WithMutationReport], else to the
// readers subscribed to its findings ([state.MutationNotifier]: the
// Runtime logs it at ERROR naming the controllers the version was routed
// to), else to the standard logger. A change of a version it did not
// sample goes unreported.
//
// A persistent state ([WithPersistence]) watches every version, with the
// guard as with the detector, and checks the version a write replaces
// before the write reaches its Persistence: a version found changed in
// place is reported, restored in the store as it was written (the same
// version, from its reference copy), and the write refused with a
// version conflict, nothing written. The writes that copy the stored
// version — Modify, UpdateWithConflicts, Teardown, the finalizer edits
// (which retry on a version conflict), and a Get followed by Update —
// then copy the version restored: a change made in place is never
// persisted by them. (A caller that keeps a changed snapshot it holds and
// writes a copy of it later writes what it copied.)
//
// A resource that cannot be copied (see [resource.CopyChecker]), or whose
// DeepCopy panics, is refused by every write with an invalid-class error;
// nothing is written. A resource's DeepCopy and ApproxSize (and the
// mutation detector's comparisons) never run under a kind's lock; its
// Metadata accessor does.
//
// Create stores version 1, phase running, the owner of
// [state.WithCreateOwner] and the creation and update times, and writes
// the version and times back into the caller's resource (S1). Update
// checks, in this order: the resource exists (not-found), its version is
// the caller's (conflict), the caller's creation time is unset or the
// stored one's (conflict: an update based on an earlier incarnation, one
// destroyed and created again since it was read), its owner is
// [state.WithUpdateOwner]'s (owner conflict), its phase is the expected
// one (phase conflict); it keeps the
// stored owner and creation time, takes the phase, spec and other metadata
// from the caller, and writes the new version and times back (S2). Destroy
// checks existence, owner, then finalizers (S3). The stored owner always
// comes from the write options, never from the resource passed in.
// Timestamps are wall-clock times, read from the system clock at least
// once a second and advanced by the monotonic clock in between, which
// halves the cost of stamping a write.
//
// Bad input is refused with an error of the invalid class that names the
// resource where there is one, before anything is written: nil or
// typed-nil resources and pointers, nil metadata, an empty namespace, type
// or ID, an unknown phase, a nil channel, a negative tail count, a bookmark
// that is malformed or of another state or kind, and more than one of
// bootstrap contents, tail events and a bookmark on one watch.
//
// # History
//
// Each kind keeps its last [DefaultHistoryCapacity] changes (4096; see
// [WithHistoryCapacity]) in a ring, and fewer when the versions they
// replaced would hold more than [DefaultHistoryBytes] of memory (8 MiB;
// see [WithHistoryBytes]): a replaced version (an event's Old) is held by
// the history alone, so the oldest changes leave the history early, down
// to the newest change, which is always kept. Sizes are estimates (typed
// resources follow their spec's slices, maps, strings and pointers), and
// a kind whose versions are too small for its history to reach the bound
// counts each as its largest one rather than keep each one's size (see
// WithHistoryBytes). So a
// kind's history holds at most about 8 MiB of old versions plus 64 bytes
// per kept change (a 16 KiB resource updated 5,000 times: the last ~500
// versions, not 4,096), and a watcher in the middle of a delivery holds at
// most 256 changes or about 512 KiB of old versions more. The history is
// the reach of tail events and bookmarks (S11): WithTailEvents(n) and
// WithKindTailEvents(n)
// replay, oldest first, up to the last n changes that concern the watch
// (of its resource; of its kind that it sees before or after the change)
// among those kept; a bookmark resumes right after its change as long as
// the changes after it are still kept, and gives a buffer-overrun error
// from the Watch call otherwise. Every change event and every Bootstrapped
// event carries a bookmark, and so does the first event of a
// single-resource watch (S8), which resumes right after the state it
// reported; bootstrap Created events carry none. Bookmarks name the state
// instance and the kind: one from elsewhere is refused as invalid. Along
// one watch, bookmarks strictly increase.
//
// Why 4096 and 8 MiB: coalescing (below) makes the history irrelevant to
// what a slow watcher receives, so it only needs to cover the resumption
// of a watch that restarts shortly after a burst of a few thousand
// changes of resources of ordinary size. Memory and time grow with it: a
// full ring costs 64 bytes per change (about 256 KiB per kind) plus the
// older versions of updated resources it still references (at most the
// byte bound), which the garbage collector keeps scanning; kinds with
// fewer changes never fill it (it grows in chunks of 256). A write reuses
// the record of the change leaving the ring in place when no kind watcher
// can still be reading it: once the ring is full, a write allocates the
// stored copy of its resource and nothing for the history, unless a kind
// watcher lags a whole ring behind. A bookmark of
// a change that left the history early is refused like one the ring
// overwrote: with a buffer-overrun error (S11).
//
// # Slow watchers (S12)
//
// No watch is ever cut off, a slow watcher never blocks writers or other
// watchers, and it always receives the final state of every resource.
// Watchers read the history without taking the kind's lock and never hold
// it while sending; writers never wait for a watcher. A write that finds
// a kind watcher parked (caught up, its goroutine waiting) may hand it
// the change itself, with a send into its channel that cannot block
// (under the kind's lock), which saves the watcher's goroutine a wake-up
// while the kind's writes are far apart.
//
// A kind watcher receives every change as its own event while it is less
// than min(history capacity, 1024) changes behind the newest change of the
// kind. Further behind, its backlog may be coalesced per resource: it is,
// for the changes that left the history before the watcher read them, and
// for a backlog of more changes than the kind has resources (some
// resource then changed more than once, and its changes become one
// event). A
// single-resource watch receives every change as its own event while
// fewer than min(history capacity, 256) of them wait for delivery, and
// coalesces them beyond that.
//
// A coalesced event carries the newest state of its resource, and its
// type follows from what that watcher last saw through its queries:
//   - not seen (absent or not matching) → now present and matching:
//     Created;
//   - seen → present and matching: Updated, Old being the state it last
//     saw;
//   - seen → gone: Destroyed, carrying the state the life it saw was
//     destroyed in — its last stored state, which may be newer than the
//     state the watcher saw — as Resource (or, when that state does not
//     match the watcher's queries, the state it last saw), and the state
//     it last saw as Old;
//   - seen → no longer matching: Destroyed, carrying the state it last
//     saw (as Resource and Old);
//   - not seen → not there (or not matching): nothing;
//   - seen → destroyed and created again: Destroyed (with the bookmark of
//     the destroy), then Created, never an Updated across two lives.
//
// Coalesced events come in the order of the changes they end with and
// carry the bookmark of that change, so what a watcher receives is always
// in the order of the changes, per resource and overall.
//
// Memory stays bounded whatever the watchers do. The history is a ring of
// fixed capacity. Changes that leave it while a kind watcher lags are
// folded into a shared spill: one map write per change leaving the
// history, whatever the number of lagging watchers, in at most one spill
// generation per lagging watcher, each holding at most one entry per
// resource that existed when it began or exists now. A kind watcher
// catching up folds its backlog into at most one entry per such resource,
// and once it delivered them keeps room for at most 1,024 (a fold that
// grew larger is let go, not kept for the watch's life);
// a single-resource watcher keeps at most 256 changes and one coalesced
// change. The only buffer-overrun error is S11's.
//
// # Watches
//
// Watch sends the resource's current state first (Created, or Destroyed
// with a resource that carries only the pointer), then every change (S8).
// WatchKind with bootstrap contents sends Created for every matching
// resource (sorted by ID), then Bootstrapped, then every change after that
// snapshot (S9). Label and ID queries report a resource that starts
// matching as Created and one that stops matching as Destroyed (S10).
// WatchKindAggregated sends the same events in batches: the bootstrap
// contents with their Bootstrapped event as one batch, then the events
// available at once. The receiver owns each batch, except that the
// Runtime's router hands the batches of its own watches back for reuse
// (package batchpool, internal: only a caller that binds a pool to the
// channel it passes gets its batches from that pool, and a bookmark on
// the last event of a batch only). Each watch runs one goroutine, which exits when the
// watch's context is done (S13); the Watch calls return once the watch is
// set up (with the context's error if it is already done). The state
// itself starts no goroutine and needs no closing.
//
// # Revisions
//
// The state numbers its changes (it implements [state.RevisionReporter]):
// every committed change, of any kind, takes the next revision of one
// sequence, starting at 1, and a write that commits nothing (a refused or
// no-op write) takes none. A write takes its revision from an atomic
// counter while it holds its kind's lock — there is no lock of the whole
// state — so a kind's changes have increasing revisions in the order the
// kind applies them, and a change committed after another one returned
// has a higher revision. Every event carries the revision of the change it
// reports (a coalesced event: its newest change's; bootstrap contents,
// Bootstrapped and a single-resource watch's first event: the revision of
// the snapshot), and [state.WithGetRevision] / [state.WithListRevision]
// report the revision a read reflects: the state's newest revision, read
// under the kind's lock, so the read is the kind at that revision exactly.
// Bookmarks stay per kind. Revisions restart at 1 with every start of a
// persistent state.
//
// # Persistence
//
// [WithPersistence] makes the state persistent through a [Persistence]
// hook: the state starts from the resources the hook restores (versions,
// creation times and all), tells the hook of every write under the
// kind's lock, in the order of the kind's changes, before applying it (a
// hook error refuses the write, nothing written), and waits for the
// hook's [Pending] after releasing the lock, so no lock is held while the
// hook waits for its disk. Reads and watches are served from memory as
// without it. Creation times stay later than any the hook says were given
// before (so the incarnation rule of Update holds across restarts); the
// history starts empty on every start, and a bookmark of an earlier run
// is refused with a buffer-overrun error (S11). Without the option, the
// hook costs one nil check per write. The bbolt file store of the
// pkg/state/inmem/boltdb module implements the hook, with group commit,
// its durability policies and its lifecycle (it owns a goroutine and
// must be closed).
//
// The rules cited here are stated in docs/resources-and-state.md in the repository.
package inmem
