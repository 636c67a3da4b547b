// Package boltdb keeps a resgraph in-memory state ([inmem]) in a bbolt
// file, so that it survives restarts. It is a module of its own, so that
// the core module does not depend on bbolt: the in-memory state calls it
// through the narrow [inmem.Persistence] hook.
//
//	reg := codec.NewRegistry()
//	codec.MustRegister[LinkSpec, LinkDef](reg) // every type the state will hold
//	st, err := boltdb.Open("/var/lib/mydaemon/state.db", reg)
//	if err != nil {
//		return err // a *boltdb.FileError: corrupt, foreign, newer format, undecodable, locked
//	}
//	defer st.Close() // after the last write: once the Runtime's Run returned
//	rt, err := runtime.New(st, logger)
//
// # What is kept
//
// [Open] loads every resource of the file into memory, with its version,
// phase, owner, labels, annotations, finalizers, creation and update
// times and spec. Reads and watches are served from memory by the same
// code as for [inmem.NewState]; only writes touch the file (a write holds
// its kind's lock a little longer: it is encoded there, never committed
// there).
// Versions go on after a restart (a resource at version 7 is at 8 after
// its next update); creation times are kept, and creation times given
// after a restart are later than any given before it, even when the clock
// went back, so the incarnation rule of Update (an update based on a
// destroyed and re-created resource is refused) holds across restarts.
// The history of changes is not kept: tail events start empty, and a
// bookmark taken before a restart is refused with a buffer-overrun error
// (rule S11: it is older than the kept history), so that a watcher that
// resumes from it bootstraps again.
//
// # Durability
//
// Every write (Create, Update, Destroy, and the helpers built on them) is
// encoded by the codec registry given to Open, with its final metadata,
// before it is applied: a type the registry does not know, or a spec that
// does not encode, refuses the write with the codec's error (of the
// invalid class, [state.IsInvalidError]); nothing is written, in memory or
// in the file. Accepted writes are committed to the file by one goroutine,
// in batches: all the writes that arrived while the previous commit ran
// go into one bbolt transaction, which bbolt makes durable with two
// fdatasync calls (group commit). The kind's lock is never held while a
// commit runs; the file always holds a prefix of the changes, in the
// order the state applied them.
//
// Two policies decide when a write returns:
//   - Default: a write returns only after the commit that holds it is on
//     disk. A crash (of the process, or of the machine, as far as the disk
//     honors fdatasync) loses no write that returned; the writes that had
//     not returned are each there or not, and if one is there so is every
//     write applied before it.
//   - [WithInterval](d, n): a write returns once it is applied in memory
//     and queued; the queue is committed within d of its first write
//     (plus the time of a commit still running), or as soon as it holds
//     n writes (while a commit runs, a
//     writer that finds more than n queued waits for their commit). A
//     crash loses at most the writes of the last d or so (those queued and
//     those of the commit in progress), never more than about 2n plus one
//     per concurrent writer; what is left is still a prefix of the
//     changes.
//
// Under both policies, readers and watchers see a write as soon as it is
// applied in memory, which is before it is durable: a crash can lose a
// change that a watcher saw but whose writer had not returned yet (under
// the interval policy, also one whose writer returned). What a watcher
// does outside the state on seeing a change (a side effect on the system)
// is therefore not covered; what it writes to the state is, since its
// write comes later in the order.
//
// A failed commit (a full disk, an I/O error) fails its writes with a
// [*CommitError], which every later write then returns (refused, nothing
// written): the writes of the failed commit were applied in memory, and
// the file may lack them. Reads go on serving memory. Opening the file
// again (a restart) brings back what the file holds.
//
// # Encryption and compression
//
// With [WithSealer] the state stores each record as an [atrest.Sealer]
// says: compressed with zstd above its threshold, and encrypted with
// AES-256-GCM under the first key of its provider, the record's key
// (namespace, type, ID) authenticated with it, the key's ID in the record
// (rule P2; see package atrest for the record format). What is encrypted
// is the value: metadata (version, owner, labels, annotations,
// finalizers, times) and spec; the bbolt key of a record, its namespace,
// type and ID, is not.
//
//	sealer, err := atrest.New(ctx, atrest.Config{Keys: atrest.KeysFromFile("/etc/mydaemon/state.keys")})
//	st, err := boltdb.Open(path, reg, boltdb.WithSealer(sealer))
//
// The file keeps a key check per key that wrote records, so Open refuses
// a wrong key (a key under a known ID that is not the one that wrote) and
// a missing one (records of an ID the sealer lacks) with a [*FileError]
// of [ErrKey] naming the key ID, before reading any record and whatever
// the mode; nothing is ever written with a key whose check the file does
// not hold. A record that does not open — it fails authentication (its
// bytes changed, or it was copied from another resource's key), is
// malformed, or is not encrypted while the state encrypts — refuses the
// file with [ErrRecord] naming the record in the default, strict mode; in
// lenient mode (atrest.Config.Lenient) Open leaves it out, as if absent,
// and reports it. A file written before is read as it is: records that
// are not encrypted or not compressed read on (compression is flagged per
// record); to encrypt such a file, open it with keys and
// atrest.Config.ReadPlaintext, and rotate.
//
// [State.Rotate] rotates the keys online (rule P3): it asks the provider
// for its keys again (put the new key first, keep the old ones), so new
// writes are under the new key at once, and rewrites every older record
// in transactions of [WithRotationBatch] records while the state serves
// reads and writes. Every record is readable at every moment; a rotation
// stopped, or cut by a crash, is resumed by the next Open, in the
// background ([State.WaitRotation]), or by the next Rotate.
// [State.RecordsByKey] tells how many records each key still holds.
//
// # Lifecycle
//
// Open starts the goroutine that commits; the caller owns it through the
// returned [*State] and must call [State.Close] once nothing writes any
// more (for a Runtime, after its Run returned); so is the goroutine of a
// rotation Open resumes. Close stops a rotation, refuses later
// writes with [ErrClosed], commits the writes already accepted, stops the
// goroutine and closes the file; reads and watches go on serving memory.
// A write's wait for its commit does not follow the write's context: it
// is bounded by the disk, and its outcome is then known.
//
// # Bad files
//
// Open reads and checks the whole file, read-only, before it writes to
// it: random bytes or a damaged file ([ErrCorrupt]), a bbolt file of
// another application ([ErrForeign]), a file of a newer format
// ([ErrNewerFormat]), a stored resource that does not decode, of a type
// the registry does not know, or under a key that does not name it
// ([ErrUndecodable], naming the key), a missing or wrong key ([ErrKey])
// and a record that does not open in strict mode ([ErrRecord]) are
// refused with a [*FileError], and the file is left untouched. A file is used by one state at a time: one
// that another state holds open, in another process or in this one, is
// refused at once with [ErrLocked], naming the holder's process ID, host
// and command ([LockHolder], read from the lock file beside it: the
// file's path plus [LockSuffix]); [WithLockTimeout] makes Open wait for
// the holder to close it instead. An
// empty file, or a bbolt file with no bucket at all, is a new state.
package boltdb
