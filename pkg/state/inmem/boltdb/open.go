package boltdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// contents is what a check of the file found.
type contents struct {
	// initialized is false for a file without any bucket yet (created,
	// but its first transaction never committed).
	initialized bool
	lineage     uint32
	run         uint32
	floor       time.Time
	resources   []resource.Resource
	// rotating tells that a rotation was under way (the "rotation"
	// mark): the state resumes it.
	rotating bool
}

// Open opens the persistent state kept in the bbolt file at path,
// creating the file when it does not exist (or is empty), and returns it
// with every resource the file holds. reg decodes them and encodes every
// write: a write of a type it does not know is refused with the codec's
// error (of the invalid class), nothing written.
//
// Open reads and checks the whole file before it writes anything to it:
// a file it refuses is left as it was, and the error is a [*FileError]
// wrapping [ErrCorrupt], [ErrForeign], [ErrNewerFormat], [ErrUndecodable]
// or [ErrLocked]. It starts the goroutine that commits the writes: the
// caller owns the state and must [State.Close] it.
//
// A file is used by one state at a time: a file that another state holds
// open (in another process or in this one) is refused at once with
// [ErrLocked], naming the holder (see [LockHolder]; [WithLockTimeout]
// makes Open wait for it instead).
func Open(path string, reg *codec.Registry, opts ...Option) (*State, error) {
	if reg == nil {
		return nil, errors.New("boltdb: open " + path + ": nil codec registry")
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.sealer == nil {
		o.sealer = plainSealer() // reads compressed records, refuses encrypted ones
	}
	l, err := lock(path, o.lockTimeout)
	if err != nil {
		return nil, err
	}
	st, err := open(path, reg, o)
	if err != nil {
		_ = l.release()
		return nil, err
	}
	st.lock = l
	return st, nil
}

// boltTimeout is the timeout of bbolt's own lock of the file, which only
// another program can hold once Open holds the lock file: bbolt waits
// forever for a zero timeout.
func boltTimeout(d time.Duration) time.Duration { return max(d, time.Nanosecond) }

// open opens the file at path, under its lock.
func open(path string, reg *codec.Registry, o options) (*State, error) {
	// A file is checked read-only first; once it is opened for writing
	// (under bbolt's exclusive lock) its metadata is compared with what
	// the check saw, and the check starts over if another process wrote
	// it in between.
	for range 3 {
		var seen *contents
		info, err := os.Stat(path)
		created := errors.Is(err, fs.ErrNotExist)
		switch {
		case err == nil && info.Size() > 0:
			if seen, err = check(path, reg, o.sealer, o.lockTimeout); err != nil {
				return nil, err
			}
		case err != nil && !created:
			return nil, &FileError{Path: path, Err: err}
		}
		db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: boltTimeout(o.lockTimeout), FreelistType: bbolt.FreelistMapType})
		if err != nil {
			return nil, openError(path, err)
		}
		c, err := start(db, seen, o.sealer)
		if errors.Is(err, errChanged) {
			_ = db.Close()
			continue
		}
		if err == nil && created {
			// The file's directory entry must be as durable as its
			// first commit: bbolt syncs the file, not its directory.
			err = syncDir(filepath.Dir(path))
		}
		if err != nil {
			_ = db.Close()
			return nil, &FileError{Path: path, Err: err}
		}
		return newState(db, reg, c, o), nil
	}
	return nil, &FileError{Path: path, Err: ErrLocked, Cause: errors.New("the file kept changing while being opened")}
}

// syncDir makes the entries of a directory durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// errChanged reports a file that changed between its check and its
// opening for writing.
var errChanged = errors.New("changed since checked")

// openError classifies an error of bbolt.Open.
func openError(path string, err error) error {
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return &FileError{Path: path, Err: ErrLocked, Cause: err}
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrVersionMismatch), errors.Is(err, bolterrors.ErrChecksum):
		return &FileError{Path: path, Err: ErrCorrupt, Cause: err}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &FileError{Path: path, Err: err}
	}
	return &FileError{Path: path, Err: ErrCorrupt, Cause: err}
}

// start begins a run of the file opened for writing: it initializes a new
// file, or checks that a checked one is still what the check saw (seen),
// and counts the run. It returns what the state starts from.
func start(db *bbolt.DB, seen *contents, sealer *atrest.Sealer) (c *contents, err error) {
	err = db.Update(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		switch {
		case seen == nil || !seen.initialized:
			if meta != nil || tx.Bucket(resourcesBucket) != nil {
				return errChanged // initialized meanwhile by someone else
			}
			c = &contents{initialized: true, lineage: max(rand.Uint32(), 1)}
			if meta, err = tx.CreateBucket(metaBucket); err != nil {
				return err
			}
			if _, err = tx.CreateBucket(resourcesBucket); err != nil {
				return err
			}
			if err = meta.Put(formatKey, binary.AppendUvarint(nil, plainFormat)); err != nil {
				return err
			}
			if err = meta.Put(lineageKey, binary.BigEndian.AppendUint32(nil, c.lineage)); err != nil {
				return err
			}
		default:
			if meta == nil {
				return errChanged
			}
			lineage, run, _, err := readMeta(meta)
			if err != nil || lineage != seen.lineage || run != seen.run {
				return errChanged
			}
			c = seen
		}
		c.run++
		if err := prepareSealing(meta, sealer, sealer.Keys()); err != nil {
			return err
		}
		return meta.Put(runKey, binary.BigEndian.AppendUint32(nil, c.run))
	})
	return c, err
}

// check reads the file at path read-only and decodes everything it holds.
// It never writes to the file. A damaged file can make bbolt panic or
// fault while reading it; both are reported as ErrCorrupt.
func check(path string, reg *codec.Registry, sealer *atrest.Sealer, lockTimeout time.Duration) (c *contents, err error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: boltTimeout(lockTimeout)})
	if err != nil {
		return nil, openError(path, err)
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = &FileError{Path: path, Err: cerr}
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, &FileError{Path: path, Err: ErrCorrupt, Cause: fmt.Errorf("reading it failed: %v", p)}
		}
	}()
	err = db.View(func(tx *bbolt.Tx) error {
		var err error
		c, err = readContents(path, tx, reg, sealer)
		return err
	})
	return c, err
}

// readContents checks the buckets and metadata of a file, the keys of
// sealer against the file's key checks, and decodes its resources.
func readContents(path string, tx *bbolt.Tx, reg *codec.Registry, sealer *atrest.Sealer) (*contents, error) {
	meta, res, problem, cause := buckets(tx)
	if problem != nil {
		return nil, &FileError{Path: path, Err: problem, Cause: cause}
	}
	if meta == nil {
		return &contents{}, nil // created, never initialized
	}
	if v := meta.Get(formatKey); v != nil {
		if f, n := binary.Uvarint(v); n == len(v) && f > formatVersion {
			return nil, &FileError{Path: path, Err: ErrNewerFormat, Cause: fmt.Errorf("format %d; this version reads format %d", f, formatVersion)}
		}
	}
	lineage, run, floor, err := readMeta(meta)
	if err != nil {
		return nil, &FileError{Path: path, Err: ErrCorrupt, Cause: err}
	}
	if err := sealer.Keys().VerifyAll(func(id string) []byte { return meta.Get(keyCheckKey(id)) }); err != nil {
		return nil, &FileError{Path: path, Err: ErrKey, Cause: err}
	}
	c := &contents{initialized: true, lineage: lineage, run: run, floor: floor, rotating: meta.Get(rotationKey) != nil}
	err = res.ForEach(func(k, v []byte) error {
		r, err := openRecord(reg, sealer, k, v)
		if err != nil {
			return recordProblem(path, sealer, k, err) // nil: skipped (lenient)
		}
		if created := r.Metadata().Created(); created.After(c.floor) {
			c.floor = created
		}
		c.resources = append(c.resources, r)
		return nil
	})
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, &FileError{Path: path, Err: ErrCorrupt, Cause: err}
	}
	return c, nil
}

// buckets returns the file's two buckets (both nil for a file created but
// never initialized), or the problem of a file that is not this
// package's (ErrCorrupt, ErrForeign) and what revealed it.
func buckets(tx *bbolt.Tx) (meta, res *bbolt.Bucket, problem, cause error) {
	var foreign []string
	if err := tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
		if n := string(name); n != string(metaBucket) && n != string(resourcesBucket) {
			foreign = append(foreign, fmt.Sprintf("%q", n))
		}
		return nil
	}); err != nil {
		return nil, nil, ErrCorrupt, err
	}
	meta, res = tx.Bucket(metaBucket), tx.Bucket(resourcesBucket)
	switch {
	case len(foreign) > 0:
		return nil, nil, ErrForeign, fmt.Errorf("unknown buckets %v", foreign)
	case meta == nil && res == nil:
		return nil, nil, nil, nil
	case meta == nil || res == nil:
		return nil, nil, ErrCorrupt, errors.New("a bucket is missing")
	}
	return meta, res, nil, nil
}

// readMeta reads the lineage, the run and the creation-time floor.
func readMeta(meta *bbolt.Bucket) (lineage, run uint32, floor time.Time, err error) {
	if f, n := binary.Uvarint(meta.Get(formatKey)); n <= 0 || f < plainFormat || f > formatVersion {
		return 0, 0, time.Time{}, fmt.Errorf("bad format version %q", meta.Get(formatKey))
	}
	l, r, fl := meta.Get(lineageKey), meta.Get(runKey), meta.Get(floorKey)
	if len(l) != 4 || len(r) != 4 || (fl != nil && len(fl) != 8) {
		return 0, 0, time.Time{}, errors.New("bad metadata")
	}
	if fl != nil {
		floor = time.Unix(0, int64(binary.BigEndian.Uint64(fl)))
	}
	return binary.BigEndian.Uint32(l), binary.BigEndian.Uint32(r), floor, nil
}

// openRecord opens a stored record with sealer, decodes it and checks
// that its key names it.
func openRecord(reg *codec.Registry, sealer *atrest.Sealer, k, v []byte) (resource.Resource, error) {
	ns, typ, id, err := parseKey(k)
	if err != nil {
		return nil, err
	}
	enc, err := sealer.Open(nil, ns, typ, id, v)
	if err != nil {
		return nil, err
	}
	r, err := reg.Decode(enc)
	if err != nil {
		return nil, err
	}
	md := r.Metadata()
	if md.Namespace() != ns || md.Type() != typ || md.ID() != id {
		return nil, fmt.Errorf("the key holds %s", resource.PointerString(md))
	}
	if md.Version().Equal(resource.VersionUndefined) {
		return nil, errors.New("undefined version")
	}
	return r, nil
}

// restored is what the state starts from, for inmem.
func (c *contents) restored() inmem.Restored {
	return inmem.Restored{Resources: c.resources, CreatedFloor: c.floor, Lineage: c.lineage, Run: c.run}
}
