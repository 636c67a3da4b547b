// Package recording is a flight recorder for a daemon built on resgraph:
// it keeps, over a sliding window, the state at the window's start and
// every change after it — each marked as made by one of the Runtime's
// controllers, by an outside writer, or by the world (an action the daemon
// noted) — so that what happened once in production can be replayed in
// the simulator (package runtimetest/sim) and shrunk to its cause.
//
//	reg := codec.NewRegistry() // the daemon's resource types
//	rec, err := recording.New(st, reg, recording.WithRuntime(rt),
//		recording.WithKeep("/var/lib/agent/recordings", 4))
//	err = rec.Attach(ctx)            // before rt.Run: from its first listing on
//	go rec.Run(ctx)                  // beside rt.Run(ctx)
//	...
//	r, err := rec.Take()             // the window now
//	err = recording.WriteFile("incident.rgrec", r, reg)
//
// A recorder reads the changes of every kind of the Runtime's graph —
// through the Runtime's own watches where it can (rule RC8), through
// its writers' commits over a state that can tap them (rule RC11), through
// watches of its own for the rest — lists them once, and from then on
// adds each change to its window; the state's writers never wait for it
// (rule S12); the window lets go of its oldest changes as they age or as
// it fills (rule RC3). Its debug page
// ([Recorder.Handler]) takes a recording on demand; it keeps one on its
// own when the Runtime flags a hot loop or a controller keeps failing.
//
// # Rules
//
//   - RC1. A recording's starting state is one cut of the state: every
//     recorded kind as it was at one revision (Recording.Revision), and
//     its changes are every change after that revision, in the order the
//     state applied them (over a state that numbers its changes; over one
//     that does not, each kind's changes in order and the kinds in the
//     order the recorder saw them). Over a routed state whose kinds live
//     in several backends, each numbering its changes on its own, the cut
//     is one per backend: each backend's kinds as they were at one of its
//     revisions (Recording.Revision is then the highest of them), its
//     changes every change after that revision, each backend's in the
//     order it applied them, interleaved by their times; a change is
//     never taken for one before the start because another backend's
//     numbers run ahead. There, Sync waits for each backend's changes,
//     and a world change is noted at the highest of the backends'
//     revisions (0 behind a wrapper that hides the routes). In every
//     case Sync waits for each kind's own newest change: the kinds come
//     by separate watches, so a newer change of one kind seen says
//     nothing of an older change of another still on its way.
//
//   - RC2. A change is a controller's (ByController) when the resource's
//     owner — after the change, or before it for a destroy — is the name
//     of one of the Runtime's controllers (rule C4: a controller writes as
//     itself), or when it changes only finalizers (rule C5: finalizers are
//     the controllers' holds; its writer is then the holder of the one
//     finalizer added or removed when it is named after a controller,
//     whoever owns the resource, else unnamed); every other change is an outside writer's
//     (ByOutside). An action of the world the daemon noted with [Recorder.Act] is a
//     change of its own (ByWorld), in its place among the others (one
//     noted at a checkpoint's revision after the checkpoint was taken
//     is after it). A
//     controller's write made with WithCreateNoOwner or WithModifyNoOwner
//     carries no owner and is recorded as an outside write.
//
//   - RC3. A recorder's memory is bounded by WithWindow's age of
//     history and its bytes (the estimated encoded size of its changes),
//     and a recording holds the newest changes within them, its starting
//     state the state right before them. In a recording, an outside
//     writer's change keeps its resource; a controller's keeps its
//     pointer, version and writer (a replay makes it again). How the
//     window holds them depends on who makes the changes:
//
//     A recorder of controllers (WithRuntime, WithControllers) over a
//     state that numbers its changes by one sequence (inmem, a boltdb
//     file, WrapCore over them) classifies each change as it comes (rule
//     RC2, by the watch event's old version; a commit log's update by
//     the version of its resource the window saw last, which it holds
//     for the kinds that come by commit logs only) and appends it, with
//     no lookup: a controller's change as its kind, ID, version,
//     revision, time and writer (no resource; estimated at a fixed
//     overhead), an outside writer's with its resource. It holds no
//     state now: its checkpoints are listings of every kind (shared
//     snapshots, made without the recorder's lock), kind k listed at r_k
//     and the checkpoint's cut the highest r_k: a change of kind k above
//     r_k and at or below the cut belongs to the checkpoint (it is folded
//     into it, whenever it comes; from the moment a listing begins until
//     it is installed, every change that comes keeps its resource for
//     that). Its checkpoints are the window's start and the next one,
//     listed by the recorder's goroutine when the changes since the last
//     reach half the window's age or bytes (the next becomes the start,
//     and the changes it holds leave; the window holds about a window of
//     changes, more while a listing is under way), a Record's start, and
//     a take's end: a take lists every kind at its cut, waits until
//     every kind's changes up to the cut (or up to its newest change,
//     when older) came, for at most WithTakeWait (DefaultTakeWait; a
//     *CatchUpError otherwise, rule RC6, and at once when the Runtime
//     it taps stopped — runtime.StoppingChangeTap — while one of the
//     kinds it tapped is behind: their changes never come), and its
//     recording's changes end at that cut, its final state the listing.
//     A session that ends with its context takes such a listing (waiting
//     as a take does), so that a take after Run returned records up to
//     it.
//
//     A recorder of controllers over a state that does not number its
//     changes, or a routed state whose kinds live in several backends,
//     classifies each change as it comes (rule RC2; an update a commit
//     log brought against the version its state now held; a controller's
//     change is estimated at a fixed overhead). It holds the state now
//     and two checkpoints of it (the window's start, and one taken when
//     the changes since it reach half the window's age or bytes, which
//     becomes the start when the next is taken), one shared snapshot per
//     resource each, and a table of the resources it holds (not of every
//     resource it saw); of its changes, an outside writer's resource.
//
//     Any other recorder (every change an outside writer's: a recorder of
//     a bare state's kinds) holds its changes as they came, unclassified:
//     two listings of the state (every kind listed, shared snapshots, no
//     copy: the window's start, and one taken when the changes since it
//     reach half the window's age or bytes, which becomes the start when
//     the next is taken; the changes the start then holds leave), and
//     every change since its start, with the state's snapshot after it
//     (before it, for a destroy; shared) — the commit logs' chunks
//     themselves (rule RC11), and the changes its watches brought in
//     chunks of its own — each estimated at its resource's size. It holds
//     about a window of changes, more while a listing is under way. A take
//     classifies each change since the window's start and folds them into
//     the state in their order of arrival, under the recorder's lock, at
//     a cost proportional to the window: an update is classified against
//     the version it replaced, the one the fold holds then (the window
//     keeps no version before a change).
//
//   - RC4. A file is whole or it is an error: [Read] returns a recording
//     only when every frame is there, intact and in order (a
//     [*FormatError] wrapping [ErrTruncated] or [ErrCorrupted] otherwise),
//     of a format version it reads (FormatVersion, 4: passes without
//     batches, or 3: a recording without passes; a [*VersionError]
//     otherwise), and of types the
//     registry knows (an [*UnknownTypesError] naming them). Writing and
//     reading a recording gives back an equal one.
//
//   - RC5. A sensitive kind's resources are kept as the codec's bytes in
//     a file and never printed: [WriteText], the debug page's text and
//     the simulator's transcripts of a replay show "<sensitive>" in place
//     of their specs.
//
//   - RC6. A recording that could not see every change says so: when the
//     recorder fell behind and its watch coalesced changes (rule S12),
//     Recording.Coalesced counts them; a recording asked to start earlier
//     than the window still held says so in Requested; a take whose
//     window was not handed every change up to its cut within its wait
//     fails with a [*CatchUpError] (RC3). A recording is never passed
//     off as more complete than it is.
//
//   - RC7. A recorder of a Runtime keeps a recording on its own once for
//     each hot loop the Runtime flags (while it stays flagged), and once
//     for each controller whose failing items or crashes since its last
//     kept recording reach the threshold (until they fall back below it).
//
//   - RC8. A recorder of a Runtime that lets its watches be tapped
//     (*runtime.Runtime: Runtime.TapChanges) records the kinds the
//     Runtime watches from the Runtime's own watches, so that the state
//     sends each of their changes once; it reads the other kinds (the
//     outputs no controller reads) from their commits (RC11) or, over a
//     state that cannot tap them, watches them itself. The kinds of a
//     Runtime's graph are each input's kind and each output type in every
//     namespace an input names and in its type's default namespace (the
//     registry's definition). It lists the kinds once the
//     Runtime's watches of them are live, so that it sees every change
//     after its starting state; when one of those watches ends (it
//     failed, or re-lists), the recorder starts its window over, as when
//     its own watch fails. Once the recorder listed, the Runtime's watch
//     goroutines hand each batch of the tapped kinds' changes over to the
//     recorder's goroutine in a bounded buffer (the batch's own slice,
//     which the watch then no longer uses (runtime.KeepingChangeTap), with
//     its time of arrival, which is the changes' time; a lock of the
//     buffer's own, never the recorder's), which adds them to the window
//     under the recorder's lock, in the order they came, before a take,
//     a Sync, a world change and the end of its session, and gives the
//     emptied slices back to the watches for their next batches (at most
//     2 MiB of them: a watch allocates none while they last); a batch
//     that would take the buffer's slices past 2 MiB is added to the
//     window by the watch goroutine itself, after the buffer's changes,
//     under the recorder's lock (a take then holds its routing that
//     long). A
//     recorder attached before the Runtime ran (RC10) adds each batch
//     on the watch goroutine, under its lock, until every kind is
//     handed over and the Runtime's watch of each brought a change newer
//     than any its own watch brought; then through the buffer.
//     WithOwnWatches turns the tap off.
//
//   - RC9. A recorder of a Runtime that lets its commits be tapped
//     (*runtime.Runtime: Runtime.TapCommits) keeps, for the newest
//     8192 commits of each of its controllers, the revision of the state
//     that the first read of the pass that made each returned
//     (Change.Read) and, for a QController's commit, the item whose run
//     made it (Change.Item; each worker's run reads on its own): a replay
//     (sim's Scenario.MatchRecording) lets that pass or item run once
//     the state is where it was, so that it reads what it read in
//     production. Each controller's log is a ring of its own,
//     written on the controller's goroutines under a lock of the ring's
//     (never the recorder's, nor another controller's: a controller
//     waits for no other to log; for a take only while the take copies
//     its ring), growing as it fills up to its size, within 8 MiB of
//     entries for every controller's logs (a ring that finds them taken
//     keeps as many as it holds). A change it no longer holds has Read 0 and no Item
//     (unknown). One recorder at a time taps a Runtime's commits.
//
//   - RC10. A recorder attached to a Runtime before it runs
//     ([Recorder.Attach]) records every change from Attach on: its first
//     window starts at the state it listed at Attach, and the changes
//     made before the Runtime runs (a daemon's intent) and the
//     controllers' first passes are changes of the recording, none is
//     folded into its starting state. It watches every kind the Runtime
//     watches itself until the Runtime listed it (the others it reads as
//     RC8 says), then hands the kind over to the Runtime's watch (rule
//     RC8): the Runtime's changes of the kind are held until
//     its own watch brought a change newer than the Runtime's listing, so
//     that no change is lost or recorded twice, and its own watch of the
//     kind ends. Over a state that does not number its changes it keeps
//     its own watches. Its later windows (after a watch ended) start as
//     RC8's.
//
//   - RC11. Over a state that can tap a kind's commits (inmem, a state
//     WrapCore builds on one or on a wrapper of one that commits through
//     it (state.CoreUnwrapper), a boltdb file, a routed state whose backend
//     of the kind can, and an access guard over one for a subject that
//     may watch the kind), a recorder reads the kinds it would
//     otherwise watch itself (every kind, without a Runtime to tap) from
//     their commits: the state's writer appends each change to the kind's
//     commit log as it commits it, holding only the kind's own write
//     lock (no lock of the recorder's; 16 bytes a change, and a chunk
//     allocated once per 508 changes, or sooner for a change whose
//     revision or time is far from its chunk's first: a rarely changed
//     kind's; and, at each chunk it starts while a quarter of the log's
//     bound is unread, a channel send that never waits), and the
//     recorder drains the logs when a writer wakes it, every second, and
//     before a take or Sync (a recorder that holds its changes as they
//     came keeps the chunks as they are: they are its window's changes,
//     RC3). No change is coalesced, and each is recorded at its write's
//     time and revision, as the state gave them. A log is bounded: when
//     its writers are the window's bytes (at 96 bytes a change) ahead of
//     the recorder, it stops, and the recorder starts its window over (a
//     take meanwhile fails, rule RC6). WithOwnWatches turns it off.
//
//   - RC12. What the daemon's code read from the world
//     ([Recorder.Observe]: the links a kernel listed) is a world change
//     of the recording (ByWorld, OpRead) with the value read, as the
//     daemon encoded it, ordered as a world action is (after the state's
//     changes of the revision it was noted at, also at the starting
//     state's revision). A replay's world fake returns the recorded
//     values to the replay's reads (sim's World.Observed), so that a
//     pass that read the world commits what it committed in production.
//     A text of the recording prints a read's size, never its value.
//
//   - RC13. A recorder that taps a Runtime's commits (RC9) also logs
//     every pass of its controllers (a Controller's pass, or the run of
//     one QController item), those that commit nothing included
//     (Recording.Passes): how many commits it made, and its reads — the
//     first that says its revision, then each whose revision or kind
//     differs from the read before — with the read's number in the pass,
//     the revision it returned and the kind it read; of a pass of a
//     Controller that took a batch of its change log that is not full
//     (an incremental pass, runtime.BatchTap), the revision at or below
//     which the batch's changes were (Pass.Batch). A recording holds
//     the passes that read a state of its window or made one of its
//     changes (one whose reads all came before the window's start
//     included). The log holds each controller's newest 16384 reads, in a
//     ring of its own written as RC9's commits are, growing as it fills
//     within the same 8 MiB; a read allocates nothing for it once the
//     ring has grown, and a
//     Runtime without a tap pays nothing for it. (The replay does not
//     use the passes yet: see docs/recording-format.md.)
//
// A type is sensitive when its definition says so (package definition,
// filled by the codec registry) or WithSensitive names it.
//
// The file format is specified in docs/recording-format.md.
package recording
