// Package etcd is a [state.State] on an etcd cluster: the same contract as
// the in-memory state (rules S1–S15, checked by conformance.StateSuite
// against a real etcd server), shared by every process that uses the same
// cluster and key prefix.
//
// # Storage
//
// [New] returns a state built by state.WrapCore on a core that keeps each
// resource under prefix/namespace/type/ID (with "%" and "/" escaped in each
// part), encoded by a [codec.Registry]: a resource type must be registered
// there before it is written or read (an unregistered type is refused with
// an error of the invalid class, nothing written). Version, owner, phase,
// timestamps, labels, annotations and finalizers are stored in the value.
// The kind's prefix itself (prefix/namespace/type/) is the kind's head
// key: every write puts it, empty, in its transaction, so that its mod
// revision is that of the kind's newest change, deletions included.
//
// Every write is one etcd transaction conditioned on what it expects:
// Create on the key's absence; Update and Destroy on the key's mod
// revision, after checking the caller's version, incarnation (creation
// time), owner and phase — or owner and finalizers — against the stored
// resource (rules S1–S3). A write that loses a race with another writer
// (another process included) gets the newer value from the same
// transaction and checks again, so a conflict is reported exactly when the
// in-memory state would report it. An Update or Destroy reads nothing
// before its transaction when the state knows the key's stored metadata
// and mod revision: from the kind's running watch, or from its write
// memory ([WithWriteMemory]: the keys it last wrote, or read with Get or
// for a write). Every entry of that memory is a pair etcd held at once,
// so an entry out of date (another process wrote the key since) costs
// only the refused transaction, which returns the current value as a read
// would. The state builds a write's transaction request itself and sends
// it with the client's KV service and call options when the client's KV
// is the client's own (clientv3.New's); with any other KV (a
// namespace.NewKV wrapper, an embedded server's client) it goes through
// that KV's builder, which makes the same request. Reads (Get, List) are linearizable
// reads from etcd and return resources decoded for the caller (with
// state.WithReadOnlyGet or WithReadOnlyList too: decoding makes a private
// value anyway). A value
// that does not decode is an error naming its key for Get (and the writes
// to it); List and watches leave it out (as if the resource were absent)
// and log the error, and the other resources go on.
//
// A write returns once the watchers of this state have its change queued:
// a watch started after a write returned sees it (in its tail events,
// bootstrap contents, resumed bookmark), as with the in-memory state.
// Changes written by other processes reach the watchers as etcd delivers
// them.
//
// # Encryption and compression
//
// With [WithSealer] each value is stored as an atrest.Sealer says:
// compressed with zstd above its threshold, and encrypted with AES-256-GCM
// under the first key of its provider, the resource's namespace, type and
// ID authenticated with it, the key's ID in the value (rule P2; see
// package atrest). Keys are not encrypted. The prefix keeps a key check
// per key that wrote (under prefix + "%keycheck/"), so New refuses a key
// under a known ID that is not the one that wrote, and a prefix holding
// records of a key the sealer lacks, with a *atrest.KeyError naming the
// key ID, in both modes and before it writes anything; it reads every
// record to do so (a state without a sealer does only when the prefix has
// key checks). A record that does not open (it fails authentication, is
// malformed, or is not encrypted while the state encrypts) refuses New in
// strict mode, naming its key, and is reported in lenient mode; after New,
// such a record (written by another process, say) is an error naming it
// for Get and for the writes to it, and is left out of lists and watches
// and logged (and reported, in lenient mode), as an undecodable value is.
// Every process that shares the prefix needs the keys.
//
// [Rotate] rotates the keys online (rule P3): with the new key first in
// the provider's list, it rewrites every older record in transactions of
// [WithRotationBatch] records, each conditioned on the record not having
// changed since read, while the states on the prefix serve reads and
// writes; watchers see nothing of it (a rewritten record is the same
// resource, and the feeds skip it). It is safe to stop at any point:
// every record stays readable, and Rotate again resumes it. The state
// starts no goroutine for it: a rotation cut by a crash is resumed by the
// next call of Rotate, not by New.
//
// # Revisions
//
// The state numbers its changes with etcd's revisions
// ([state.RevisionReporter]): a change's revision is its mod revision, one
// sequence for the whole cluster (so a kind's revisions increase but are
// not consecutive). Every event carries its change's revision (bootstrap
// contents, Bootstrapped and a single-resource watch's first event: the
// revision of the feed's snapshot); Get and List report the revision of
// their linearizable read ([state.WithGetRevision],
// [state.WithListRevision]); KindRevision reads the kind's head key, whose
// mod revision is the kind's newest change's.
//
// # Watches
//
// Each kind watched through a state has one feed while it has watchers:
// one etcd watch of the kind's prefix and one goroutine, which decodes
// every change once and hands the same decoded resources to every watcher
// of the kind as shared read-only snapshots (rule S7; Update refuses the
// current snapshot of a resource as invalid: DeepCopy it first). The feed
// keeps the kind's current resources, from which writes take what they
// expect, saving a read. Watchers follow the rules of the
// in-memory state: Watch sends the current state first (S8), WatchKind
// with bootstrap contents sends them, then Bootstrapped, then changes (S9),
// label and ID queries turn stops and starts of matching into Destroyed
// and Created (S10), and WatchKindAggregated sends what is available at
// once as one batch.
//
// Bookmarks are positions in the cluster's history: an etcd revision and
// the index of the change within it. A bookmark resumes after its change
// from any state on the same cluster (another process, a later run), as
// long as the changes after it are kept: the feed keeps the last
// [DefaultHistoryCapacity] changes of its kind ([WithHistoryCapacity]),
// and reads the changes before it started from etcd's history as far back
// as a tail or a bookmark needs them, and no further: a bookmark from its
// revision on; a tail in windows of revisions just below what the feed
// read already, each twice as wide as the last, until it has the tail's
// changes or reaches the kind's first write (the creation of its head
// key). A read never goes below the revision etcd compacted its history
// to, nor past the history capacity; what it read stays with the feed for
// the next watches. The changes after the compaction's revision are whole,
// so a bookmark at that revision resumes; a change of that revision itself
// whose previous state etcd compacted away (any but a creation) cannot be
// told, so a tail does not reach it nor a change before it, and a bookmark
// before it is an overrun. So a read costs what lies between the watch's need
// and now ([Counters].HistoryRevisions), never the cluster's whole
// history. A bookmark older than what is kept or can be read (compacted,
// or more than the capacity of changes ago) gives a buffer-overrun error
// from the Watch call (S11); one of another cluster is invalid. (The
// history of a kind's keys written or deleted by other means than this
// package, which leave its head key as it was, may be missed by a tail.)
//
// A watcher that falls behind the kept history never blocks the feed,
// writers or other watchers, and is never cut off: it catches up with one
// coalesced event per resource changed since its position, typed by what
// it last saw (S12); a resource destroyed meanwhile comes as Destroyed
// carrying the state it was destroyed in (its last stored state, which may
// be newer than what the watcher saw; Old is the state it saw). When etcd
// ends the feed's watch — a compaction past it, a lost leader, a restart
// of the server, a broken connection — the feed lists the kind again,
// records the difference from what it held as changes (updated and
// created resources in the order of their last writes, then destroyed
// ones, with the state the feed held last), and watches on from there:
// every watcher receives the final state of every resource, coalesced,
// and nothing is lost. Meanwhile it retries with a backoff of up to two seconds.
//
// A relist that finds nothing changed (resources created and destroyed
// while the watch was down leave no trace) delivers nothing, and a
// bookmark from inside the stretch it did not watch is a buffer overrun.
//
// A watch of a whole kind with bootstrap contents ends its bootstrap with
// the bookmark of the kind's newest change the feed holds (the same for
// every such watch of the feed); [state.KindHeadReporter] is implemented:
// KindHead reads the kind's head key (one linearizable read), waits until
// the feed applied that revision, and returns the bookmark of the feed's
// newest change — what every whole-kind watch holds on its last event once
// it received every change written before the call, in any process (a
// key written to etcd by other means than this package is not waited
// for). The Runtime's quiescence check (runtimetest.Settle) is then
// exact across processes.
//
// Watches end, and their goroutines exit, when their context is done; the
// last watcher of a kind stops its feed (S13). The state starts no other
// goroutine, and the etcd client stays the caller's.
//
// [WithCounters] counts what the state does: writes committed, writes
// refused with a conflict, transactions that lost a race to another
// writer, relists.
//
// # Leadership and fenced writes
//
// Replicas of a Runtime that share a state elect, through an [Elector],
// which of them runs each controller (runtime.WithLeadership, rule E4):
// each Elector holds an etcd lease of [WithLeaseTTL], and a term of an
// election is a key bound to it under prefix + "%leader/" (no kind's key
// is there). A write whose context carries a term's fence
// ([state.WithFence]) adds to its transaction the condition that the
// term's key still exists with the term's create revision: once the term
// ended — the lease expired because its holder was killed, paused or cut
// off for longer than the TTL, or it resigned and a successor leads — the
// write fails with an error of the fenced class ([state.IsFencedError])
// and nothing is written, whenever its request reaches etcd. The state
// checks the fences of Electors on the same cluster ([state.Fencer]);
// [Counters].Fenced counts the refusals. See [Elector] for terms,
// takeover and the spreading of elections over the replicas.
//
// The keys of the elections, as they are written: prefix + "%leader/" +
// the election's name, "%" and "/" escaped as "%25" and "%2F" + "/" +
// the candidate's lease ID in lower-case hex. The Runtime's election
// (runtime.LeadPerRuntime, runtime.RuntimeElection) is
// "/mydaemon/%leader/runtime/694d8e1c2b3a4f05" for the prefix
// "/mydaemon/"; a controller's (runtime.LeadPerController: "controller/"
// + its name) "/mydaemon/%leader/controller%2FBtoC/694d8e1c2b3a4f05".
// An Elector has one lease, so its keys in every election end with the
// same ID. The leader's key is the oldest; a term's number is its create
// revision.
//
// The lease's floor, and the takeover time that follows: the TTL is the
// one etcd grants. The elector's floor is 1 s ([WithLeaseTTL] rounds up
// to whole seconds); etcd's is 1.5 times its --election-timeout, rounded
// up to whole seconds: 2 s with etcd's default timeout of 1 s, 1 s only
// with a timeout of about 650 ms or less. A TTL granted longer than asked
// is logged at WARN, naming both. With the granted TTL G, a standby
// leads, after its leader was killed, once (1) the lease expired: G·2/3
// to G after the kill, since the client renews it every G/3; (2) etcd
// noticed: it checks for expired leases every 500 ms; (3) the standby's
// election: the deletion of the leader's key reaches it and its key is
// the oldest, a watch event and a round trip; and (4) its controllers
// start as after a restart (a Controller's first pass, a QController
// with every existing resource of its primary inputs queued), reading
// from the caches the standby kept warm, or from etcd for the kinds
// without a cache. A leader that stops cleanly resigns: only (3) and (4)
// remain. docs/performance.md has the figures.
//
// # Errors
//
// [New] fails within [WithConnectTimeout] (default 10 s) when etcd does
// not answer. Bad input is refused with an error of the invalid class
// before anything is written, as by the in-memory state. An unreachable
// etcd makes calls fail when their context is done (the client retries
// until then); a write whose context ends may or may not have been applied.
package etcd
