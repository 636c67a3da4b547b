package etcd

import (
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
)

// DefaultWriteMemory is the number of keys whose stored metadata a state
// remembers from its own writes unless [WithWriteMemory] says otherwise.
const DefaultWriteMemory = 8192

// WithWriteMemory sets how many keys the state remembers the stored
// metadata and mod revision of, from the writes it committed and the
// values it read for a write: an Update or Destroy of such a key checks
// the caller's resource against what it remembers and issues its one
// conditional transaction without reading the key first. A memory that
// is out of date (another process wrote the key since) costs the
// transaction that etcd refuses, which returns the current value; the
// write is then checked again on it, exactly as after a read. n is
// clamped to [0, 1<<24]; 0 remembers nothing (every write without a
// running watch of its kind reads first).
func WithWriteMemory(n int) Option {
	return func(o *options) { o.writeMemory = min(max(n, 0), 1<<24) }
}

// remembered is the metadata a key stored at its mod revision, as a
// write of this state committed it or a read for a write returned it.
type remembered struct {
	md  resource.Metadata // frozen: never changed
	mod int64
}

// writeMemory maps keys to what they stored at a revision. Every entry is
// a (metadata, mod revision) pair etcd held at once, so that a
// transaction conditioned on the mod revision succeeds only if the key
// still stores that metadata; an entry out of date is thus safe, only
// slower. It holds at most capacity entries: a new key beyond that
// replaces an arbitrary one.
type writeMemory struct {
	mu       sync.Mutex
	capacity int
	m        map[string]remembered // guarded by mu
}

func newWriteMemory(capacity int) *writeMemory {
	return &writeMemory{capacity: capacity, m: map[string]remembered{}}
}

// get returns what key stored at the newest revision remembered.
func (w *writeMemory) get(key string) (remembered, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.m[key]
	return e, ok
}

// put remembers that key stored md (which it freezes) at mod, unless a
// newer revision of key is remembered already.
func (w *writeMemory) put(key string, md resource.Metadata, mod int64) {
	if w.capacity == 0 {
		return
	}
	md.Freeze()
	w.mu.Lock()
	defer w.mu.Unlock()
	old, ok := w.m[key]
	if ok && old.mod >= mod {
		return
	}
	if !ok && len(w.m) >= w.capacity {
		for k := range w.m {
			delete(w.m, k)
			break
		}
	}
	w.m[key] = remembered{md: md, mod: mod}
}

// forget drops key unless what is remembered of it is newer than rev.
func (w *writeMemory) forget(key string, rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.m[key]; ok && e.mod < rev {
		delete(w.m, key)
	}
}
