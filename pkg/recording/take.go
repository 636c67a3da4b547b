package recording

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/graphkinds"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Take returns a recording of the recorder's window now: the starting
// state and every change since (reason "on demand"). Before Run read the
// state it fails with ErrNotStarted.
func (r *Recorder) Take() (*Recording, error) { return r.take("on demand", nil, false) }

// Record records from now for d (or until ctx is done: then it returns
// ctx's error and no recording) and returns that recording: the state now
// and every change of the next d. When the window lets go of the start
// before d is over (its bounds), the recording starts later, and its
// Requested field says when it was asked to start; when the recorder
// started over meanwhile (its watch failed), it fails.
func (r *Recorder) Record(ctx context.Context, d time.Duration) (*Recording, error) {
	r.mu.Lock()
	if !r.ready {
		r.mu.Unlock()
		return nil, ErrNotStarted
	}
	_ = r.drainLocked() // a log that overflowed fails the take
	mark := r.win.mark(time.Now())
	mark.gen = r.gen
	if lw := r.leanWin(); lw != nil {
		m, err := r.leanMark(lw)
		if err != nil {
			r.mu.Unlock()
			return nil, err
		}
		mark = m
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.win.unmark(mark)
		r.mu.Unlock()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	return r.take(fmt.Sprintf("recorded for %v", d), mark, false)
}

// ErrStartedOver is returned by Record when the recorder started its
// window over (its watch failed, or the Runtime's kinds changed) while it
// recorded.
var ErrStartedOver = errors.New("recording: the recorder started over while recording (its watch failed or the kinds changed)")

// take builds a recording of the window, from the checkpoint from when
// given (a Record's start); session is set on the session's goroutine
// (it reads the recorder's own watches while the take waits).
func (r *Recorder) take(reason string, from *mark, session bool) (*Recording, error) {
	r.mu.Lock()
	if !r.ready {
		r.mu.Unlock()
		return nil, ErrNotStarted
	}
	if from != nil && from.gen != r.gen {
		r.mu.Unlock()
		return nil, ErrStartedOver
	}
	if err := r.drainLocked(); err != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("recording: %w: it starts its window over", err)
	}
	now := time.Now()
	v, err := r.viewLocked(from, now, session)
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	kinds := slices.Clone(r.kinds)
	controllers := slices.Sorted(maps.Keys(r.controllers.names))
	r.mu.Unlock()
	reads, passes := r.passes.readsNow(), r.passes.passes(v.start.rev, kinds, r.passes.commitsOf(v.entries))
	rec := &Recording{
		Source: r.cfg.source, Reason: reason, Taken: now, Start: v.start.at, End: now,
		Revision: v.start.rev, Kinds: kinds, Controllers: controllers, Replay: r.cfg.replay,
		Initial: copies(v.initial), Final: copies(v.final), Changes: make([]Change, 0, len(v.entries)),
		Passes: passes,
	}
	if from != nil {
		rec.Requested = from.at
	}
	for _, e := range v.entries {
		c := Change{
			Offset: max(time.Unix(0, e.at).Sub(v.start.at), 0), Revision: e.rev, By: e.by, Op: e.op,
			Writer: e.writer, Action: e.action, Value: slices.Clone(e.value), Coalesced: e.coalesced,
		}
		if e.by != ByWorld {
			c.Pointer, c.Version = e.key, e.ver
		}
		if e.by == ByController {
			c.Read, c.Item = reads.of(e.key, e.ver, e.rev)
		}
		if e.res != nil {
			c.Resource = e.res.DeepCopy()
		}
		if e.coalesced {
			rec.Coalesced++
		}
		rec.Changes = append(rec.Changes, c)
	}
	return rec, nil
}

// viewLocked returns what a take at now needs of the window, from the
// mark from when given; r.mu is held (a lean window's take lets go of
// it while it lists: rule RC3).
func (r *Recorder) viewLocked(from *mark, now time.Time, session bool) (view, error) {
	if lw := r.leanWin(); lw != nil {
		return r.leanView(lw, from, session)
	}
	return r.win.view(from, now), nil
}

// copies returns private copies of the resources, sorted.
func copies(rs []resource.Resource) []resource.Resource {
	out := make([]resource.Resource, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.DeepCopy())
	}
	sortResources(out)
	return out
}

// resolve returns the kinds to record and the controllers' names: those
// of the options and of the Runtime's graph.
func (r *Recorder) resolve() ([]Kind, map[string]bool, error) {
	keys := map[resource.KindKey]bool{}
	for _, k := range r.cfg.kinds {
		keys[resource.KindOf(k)] = true
	}
	controllers := map[string]bool{}
	for _, c := range r.cfg.controllers {
		controllers[c] = true
	}
	if r.cfg.rt != nil {
		g, err := r.cfg.rt.GetDependencyGraph()
		if err != nil {
			return nil, nil, err
		}
		for _, k := range graphkinds.Kinds(g) {
			keys[k] = true
		}
		for _, c := range graphkinds.Controllers(g) {
			controllers[c] = true
		}
		r.outputDefaults(g, keys)
	}
	if len(keys) == 0 {
		return nil, nil, fmt.Errorf("recording: no kind to record (WithRuntime of a Runtime with controllers, or WithKinds)")
	}
	kinds := make([]Kind, 0, len(keys))
	for k := range keys {
		kinds = append(kinds, Kind{Namespace: k.Namespace(), Type: k.Type(), Sensitive: r.cfg.sensitive[k.Type()] || r.reg.Definitions().Sensitive(k.Type())})
	}
	slices.SortFunc(kinds, func(a, b Kind) int { return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Type, b.Type)) })
	return kinds, controllers, nil
}

// outputDefaults adds to keys each output type of g in its type's default
// namespace (the registry's definition): an output declared in any
// namespace is written there unless told otherwise, also when no input
// of the graph names that namespace (rule RC8).
func (r *Recorder) outputDefaults(g *controller.DependencyGraph, keys map[resource.KindKey]bool) {
	for typ := range graphkinds.Writers(g) {
		if d, ok := r.reg.Definitions().Get(typ); ok && d.DefaultNamespace != "" {
			keys[resource.KindOf(resource.NewKind(d.DefaultNamespace, typ))] = true
		}
	}
}
