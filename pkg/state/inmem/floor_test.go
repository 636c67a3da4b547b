package inmem

import (
	"slices"
	"strings"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// floorState is the benchmarks' floor (bench/README.md): a plain map under a
// mutex that copies on write and on read, checks and bumps
// versions, and sorts List by ID. It has no history, no watches, no
// timestamps, no owners or phases: whatever the real state costs beyond
// it is the price of those.
type floorState struct {
	mu    sync.Mutex
	items map[resource.ID]resource.Resource // guarded by mu
}

func newFloorState() *floorState {
	return &floorState{items: map[resource.ID]resource.Resource{}}
}

func (f *floorState) Create(r resource.Resource) error {
	c := r.DeepCopy()
	md := c.Metadata()
	md.SetVersion(resource.NewVersion(1))
	f.mu.Lock()
	if _, ok := f.items[md.ID()]; ok {
		f.mu.Unlock()
		return state.NewConflictError(md, "exists")
	}
	f.items[md.ID()] = c
	f.mu.Unlock()
	r.Metadata().SetVersion(md.Version())
	return nil
}

func (f *floorState) Update(r resource.Resource) error {
	c := r.DeepCopy()
	md := c.Metadata()
	f.mu.Lock()
	cur, ok := f.items[md.ID()]
	if !ok {
		f.mu.Unlock()
		return state.NewNotFoundError(md, "absent")
	}
	if !cur.Metadata().Version().Equal(md.Version()) {
		f.mu.Unlock()
		return state.NewConflictError(md, "version")
	}
	md.SetVersion(md.Version().Next())
	f.items[md.ID()] = c
	f.mu.Unlock()
	r.Metadata().SetVersion(md.Version())
	return nil
}

func (f *floorState) Get(ptr resource.Pointer) (resource.Resource, error) {
	f.mu.Lock()
	r, ok := f.items[ptr.ID()]
	f.mu.Unlock()
	if !ok {
		return nil, state.NewNotFoundError(ptr, "absent")
	}
	return r.DeepCopy(), nil
}

func (f *floorState) List() []resource.Resource {
	f.mu.Lock()
	out := make([]resource.Resource, 0, len(f.items))
	for _, r := range f.items {
		out = append(out, r)
	}
	f.mu.Unlock()
	slices.SortFunc(out, func(a, b resource.Resource) int {
		return strings.Compare(a.Metadata().ID(), b.Metadata().ID())
	})
	for i, r := range out {
		out[i] = r.DeepCopy()
	}
	return out
}
