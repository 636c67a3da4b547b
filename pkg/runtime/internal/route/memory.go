package route

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/state"
)

// Memory is what a kind's watch remembers of the resources it routed as
// present — enough to tell, after a re-list, which resources changed while
// the watch was down and which disappeared, and what those were when they
// were last routed (rule Q4: a destroyed mapped input reaches MapInput with
// its last version, however its destruction was seen). There is one per
// watched kind: the kind's cache when the kind is cached (the cache holds
// what the watch delivered anyway), the last routed snapshot of each
// resource otherwise (the state's shared snapshot, which the state holds
// too while the resource exists: remembering it costs a map entry) —
// unless the state resumes the kind's watches from a bookmark, which needs
// no memory (noMemory, resume.go). Only the kind's watch goroutine writes
// it.
type Memory interface {
	// Apply records a batch of routed changes (Created, Updated or
	// Destroyed) of the resources whose metadata are metas. current tells
	// that the memory then holds the kind at revision rev (the state's
	// revision of the batch's newest event); it is false for the changes
	// of a re-list before its end.
	ApplyBatch(events []state.Event, metas []*resource.Metadata, rev uint64, current bool)
	// Unchanged reports whether id was last routed with md's generation
	// and version.
	Unchanged(id resource.ID, md *resource.Metadata) bool
	// Last returns the resource id as last routed, if remembered.
	Last(id resource.ID) (resource.Resource, bool)
	// AppendRemembered appends every remembered resource, as last routed,
	// to dst.
	AppendRemembered(dst []Remembered) []Remembered
	// MarkReady is called once the kind's first bootstrap is remembered.
	MarkReady()
}

// Remembered is a resource a kind's watch routed as present, as it last
// routed it: the event's resource (a shared snapshot) and its metadata.
type Remembered struct {
	Res resource.Resource
	MD  *resource.Metadata
}

// seenMap is the [Memory] of an uncached kind.
type seenMap map[resource.ID]Remembered

func (m seenMap) ApplyBatch(events []state.Event, metas []*resource.Metadata, _ uint64, _ bool) {
	for i, md := range metas {
		_, _, id := md.Identity()
		if events[i].Type == state.Destroyed {
			delete(m, id)
			continue
		}
		m[id] = Remembered{Res: events[i].Resource, MD: md}
	}
}

func (m seenMap) Unchanged(id resource.ID, md *resource.Metadata) bool {
	old, ok := m[id]
	return ok && old.MD.Created().Equal(md.Created()) && old.MD.Version().Equal(md.Version())
}

func (m seenMap) Last(id resource.ID) (resource.Resource, bool) {
	r, ok := m[id]
	return r.Res, ok
}

func (m seenMap) AppendRemembered(dst []Remembered) []Remembered {
	for _, r := range m {
		dst = append(dst, r)
	}
	return dst
}

// MarkReady does nothing: only a cache serves reads once ready.
func (seenMap) MarkReady() {}

// cacheMemory is the [Memory] of a cached kind: its cache.
type cacheMemory struct{ *cache.Kind }

func (c cacheMemory) Last(id resource.ID) (resource.Resource, bool) { return c.Delivered(id) }

func (c cacheMemory) AppendRemembered(dst []Remembered) []Remembered {
	c.AppendDelivered(func(res resource.Resource, md *resource.Metadata) {
		dst = append(dst, Remembered{Res: res, MD: md})
	})
	return dst
}
