package route

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Memory is what a kind's watch remembers of the resources it routed as
// present — enough to tell, after a re-list, which resources changed while
// the watch was down and which disappeared. There is one per watched kind:
// the kind's cache when the kind is cached (the cache holds what the watch
// delivered anyway), the generation and version of each resource
// otherwise. Only the kind's watch goroutine writes it.
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
	// AppendIDs appends every remembered ID to dst.
	AppendIDs(dst []resource.ID) []resource.ID
	// MarkReady is called once the kind's first bootstrap is remembered.
	MarkReady()
}

// seenEntry is what the watch of an uncached kind remembers of a resource.
type seenEntry struct {
	created int64 // Created().UnixNano(): tells generations apart
	version uint64
}

func seenOf(md *resource.Metadata) seenEntry {
	return seenEntry{created: md.Created().UnixNano(), version: md.Version().Value()}
}

// seenMap is the [Memory] of an uncached kind.
type seenMap map[resource.ID]seenEntry

func (m seenMap) ApplyBatch(events []state.Event, metas []*resource.Metadata, _ uint64, _ bool) {
	for i, md := range metas {
		_, _, id := md.Identity()
		if events[i].Type == state.Destroyed {
			delete(m, id)
			continue
		}
		m[id] = seenOf(md)
	}
}

func (m seenMap) Unchanged(id resource.ID, md *resource.Metadata) bool {
	old, ok := m[id]
	return ok && old == seenOf(md)
}

func (m seenMap) AppendIDs(dst []resource.ID) []resource.ID {
	for id := range m {
		dst = append(dst, id)
	}
	return dst
}

// MarkReady does nothing: only a cache serves reads once ready.
func (seenMap) MarkReady() {}
