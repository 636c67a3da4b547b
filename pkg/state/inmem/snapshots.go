package inmem

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ state.SnapshotTracker = (*core)(nil)

// TracksSnapshots implements [state.SnapshotTracker]: true when the
// mutation detector is on.
func (c *core) TracksSnapshots() bool { return c.report != nil && !c.guard }

// HandedTo implements [state.SnapshotTracker]: a snapshot the detector
// watches (a current version, or the one before it while the history
// keeps the change that replaced it) records h as a holder until its last
// check. Resources that are not such snapshots are ignored.
func (c *core) HandedTo(h state.SnapshotHolder, rs ...resource.Resource) {
	if !c.TracksSnapshots() || usercode.IsNil(h) {
		return
	}
	c.eachWatched(rs, func(ks *kindStore, r, _ resource.Resource) {
		ks.det.handedTo(r, h)
	})
}

// CheckHanded implements [state.SnapshotTracker]: each watched snapshot
// of rs is compared with its reference copy now; the changes found (not
// reported before) name their holders, h first, and are returned for h
// to raise.
func (c *core) CheckHanded(h state.SnapshotHolder, rs ...resource.Resource) []error {
	if !c.TracksSnapshots() || usercode.IsNil(h) {
		return nil
	}
	var errs []error
	c.eachWatched(rs, func(ks *kindStore, r, ref resource.Resource) {
		err := compareSnapshot(r, ref)
		if err == nil {
			return
		}
		first, holders := ks.det.found(r, false)
		if !first {
			return
		}
		setHolders(err, append([]state.SnapshotHolder{h}, slices.DeleteFunc(slices.Clone(holders), func(o state.SnapshotHolder) bool { return o == h })...))
		errs = append(errs, err)
	})
	return errs
}

// ReportChange implements [state.SnapshotTracker]: the detector's report.
func (c *core) ReportChange(err error) {
	if c.report != nil && err != nil {
		c.report(err)
	}
}

// eachWatched calls fn, without any lock held, for every resource of rs
// that is a snapshot the detector watches, once each, with its kind and
// its reference copy.
func (c *core) eachWatched(rs []resource.Resource, fn func(ks *kindStore, r, ref resource.Resource)) {
	var seen map[resource.Resource]struct{}
	if len(rs) > 1 {
		seen = make(map[resource.Resource]struct{}, len(rs))
	}
	for _, r := range rs {
		if usercode.IsNil(r) {
			continue
		}
		if seen != nil {
			if _, dup := seen[r]; dup {
				continue
			}
			seen[r] = struct{}{}
		}
		md := r.Metadata()
		if md == nil {
			continue
		}
		p := resource.PointerOf(md)
		ks := c.lookup(p.Kind())
		if ks == nil || ks.det == nil {
			continue
		}
		ks.mu.Lock()
		ref := ks.refLocked(p.ID(), r)
		ks.mu.Unlock()
		if ref != nil {
			fn(ks, r, ref)
		}
	}
}

// refLocked returns the reference copy of r when r is the current
// version of id, or the one before it (the destroyed version, after a
// destroy) while the history keeps the change that replaced it; nil
// otherwise.
func (ks *kindStore) refLocked(id resource.ID, r resource.Resource) resource.Resource {
	cur := ks.det.cur[id]
	if cur == nil {
		return nil
	}
	if cur.ref != nil && ks.bare(ks.items[id]) == r {
		return cur.ref
	}
	if cur.seq >= ks.floor {
		if rec := ks.recordLocked(cur.seq); rec.old == r {
			return ks.det.refLocked(ks, cur.seq)
		}
	}
	return nil
}
