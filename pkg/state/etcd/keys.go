package etcd

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Keys: prefix + esc(namespace) + "/" + esc(type) + "/" + esc(id), where
// esc replaces "%" with "%25" and "/" with "%2F", so that the kind part of
// a key is a prefix of exactly the keys of that kind.
//
// The kind prefix itself is the kind's head key: every write to the kind
// puts it (empty) in the same transaction, so that its mod revision is the
// revision of the kind's newest change — deletions included, which leave
// no key behind. It is not a resource (a resource's key is longer), and
// the kind's watch receives its changes with those of the resources.

var (
	escaper   = strings.NewReplacer("%", "%25", "/", "%2F")
	unescaper = strings.NewReplacer("%25", "%", "%2F", "/")
)

// kindPrefix returns the key prefix of the resources of a kind (built
// once per kind, see kindPrefixes).
func (c *core) kindPrefix(ns resource.Namespace, typ resource.Type) string {
	k := [2]string{ns, typ}
	c.prefixes.mu.RLock()
	p, ok := c.prefixes.m[k]
	c.prefixes.mu.RUnlock()
	if ok {
		return p
	}
	p = c.prefix + escaper.Replace(ns) + "/" + escaper.Replace(typ) + "/"
	c.prefixes.mu.Lock()
	defer c.prefixes.mu.Unlock()
	if c.prefixes.m == nil {
		c.prefixes.m = map[[2]string]string{}
	}
	if len(c.prefixes.m) < maxKindPrefixes {
		c.prefixes.m[k] = p
	}
	return p
}

// kindPrefixes caches the key prefixes of the kinds a state wrote or
// read, so that a write's key is one concatenation and its head key none.
// It keeps at most maxKindPrefixes kinds; the prefix of a kind beyond them
// is built for each call. The zero value is ready to use.
type kindPrefixes struct {
	mu sync.RWMutex
	m  map[[2]string]string // namespace, type -> prefix; guarded by mu
}

// maxKindPrefixes bounds kindPrefixes.
const maxKindPrefixes = 4096

// headKey is the kind's head key (see above) for a write's request: the
// bytes of its cached prefix, which nothing writes to.
func (c *core) headKey(ns resource.Namespace, typ resource.Type) []byte {
	return unsafeBytes(c.kindPrefix(ns, typ))
}

// unsafeBytes is s's bytes without a copy, for a request that only reads
// them (a key in a transaction etcd's client marshals).
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// key returns the key of a resource.
func (c *core) key(ns resource.Namespace, typ resource.Type, id resource.ID) string {
	return c.kindPrefix(ns, typ) + escaper.Replace(id)
}

// idOf returns the ID in a key of the kind whose prefix is kindPrefix.
func idOf(kindPrefix string, key []byte) (resource.ID, bool) {
	k := string(key)
	if !strings.HasPrefix(k, kindPrefix) {
		return "", false
	}
	rest := k[len(kindPrefix):]
	if rest == "" || strings.Contains(rest, "/") {
		return "", false
	}
	return unescaper.Replace(rest), true
}

// pointerOf returns the namespace, type and ID a resource's key names,
// and false for a key that is not a resource's (a kind's head key, the
// elections' and key checks' keys under prefix + "%").
func (c *core) pointerOf(key []byte) (ns, typ, id string, ok bool) {
	k, found := strings.CutPrefix(string(key), c.prefix)
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(k, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return unescaper.Replace(parts[0]), unescaper.Replace(parts[1]), unescaper.Replace(parts[2]), true
}
