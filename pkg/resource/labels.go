package resource

import "maps"

// kv is the string map behind [Labels] and [Annotations]. The zero value is
// an empty map; a nil map is never written to, so a copy of a kv shares
// nothing mutable once [kv.clone] was called.
type kv struct {
	m map[string]string
}

// Set sets key to value.
func (l *kv) Set(key, value string) {
	if l.m == nil {
		l.m = make(map[string]string, 1)
	}
	l.m[key] = value
}

// Delete removes key.
func (l *kv) Delete(key string) {
	delete(l.m, key)
	if len(l.m) == 0 {
		l.m = nil
	}
}

// Get returns the value of key and whether it is set.
func (l kv) Get(key string) (string, bool) {
	v, ok := l.m[key]
	return v, ok
}

// Raw returns a copy of the keys and values (nil when empty).
func (l kv) Raw() map[string]string { return maps.Clone(l.m) }

// Len returns the number of keys.
func (l kv) Len() int { return len(l.m) }

func (l kv) equal(o kv) bool { return maps.Equal(l.m, o.m) }

func (l kv) clone() kv { return kv{m: maps.Clone(l.m)} }

// Labels are the key/value pairs of a resource that label and ID queries
// select on.
type Labels struct{ kv }

// Equal reports whether l and o hold the same keys and values.
func (l Labels) Equal(o Labels) bool { return l.equal(o.kv) }

// Annotations are key/value pairs attached to a resource that queries do not
// select on.
type Annotations struct{ kv }

// Equal reports whether a and o hold the same keys and values.
func (a Annotations) Equal(o Annotations) bool { return a.equal(o.kv) }
