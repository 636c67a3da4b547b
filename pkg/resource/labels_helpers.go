package resource

import (
	"maps"
	"slices"
)

// Keys returns the keys, sorted (nil when empty).
func (l kv) Keys() []string {
	if len(l.m) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(l.m))
}

// TempKV is the temporary view of labels or annotations that [Labels.Do]
// and [Annotations.Do] hand their function: reads see the edits made so
// far, and the edits are applied when the function returns.
type TempKV interface {
	Get(key string) (string, bool)
	Set(key, value string)
	Delete(key string)
}

// tempKV is a TempKV over a private copy of a map.
type tempKV struct{ m map[string]string }

func (t *tempKV) Get(key string) (string, bool) { v, ok := t.m[key]; return v, ok }
func (t *tempKV) Delete(key string)             { delete(t.m, key) }
func (t *tempKV) Set(key, value string) {
	if t.m == nil {
		t.m = make(map[string]string, 1)
	}
	t.m[key] = value
}

// Do edits the keys and values as a batch: fn works on a temporary copy
// (its reads see its own edits), and what fn leaves replaces the contents
// when it returns. A panic in fn leaves them unchanged.
func (l *kv) Do(fn func(temp TempKV)) {
	t := &tempKV{m: maps.Clone(l.m)}
	fn(t)
	if len(t.m) == 0 {
		t.m = nil
	}
	l.m = t.m
}

// Matches reports whether the labels satisfy term (see
// [LabelTerm.Matches]).
func (l Labels) Matches(term LabelTerm) bool { return term.Matches(l) }
