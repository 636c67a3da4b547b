package recording

import (
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/state"
)

// history is what a recorder keeps of its changes (rule RC3), one of
// three kinds for a session: a recorder of controllers (a Runtime's, or
// WithControllers) classifies each change as it comes (most of its
// changes are the controllers', of which a recording keeps no resource)
// and appends it to a window whose checkpoints are listings over a state
// that numbers its changes by one sequence (lean), or to one that holds
// the state now over any other (classified); any other recorder (every
// change an outside writer's, whose resource a recording keeps) keeps
// them as they came and classifies them when a recording is taken
// (rawWindow). Used under the recorder's lock.
type history interface {
	// reset starts the history over from the listing l.
	reset(l *listing)
	// addEvents adds a batch of one kind's watch events, which came at at.
	addEvents(evs []state.Event, at time.Time)
	// addRun adds a run of one kind's commit log.
	addRun(r run)
	// addWorld adds a world change.
	addWorld(c *change)
	// reached reports whether the history holds every change up to
	// revision want[i] of each revision domain i.
	reached(want []uint64) bool
	// aged trims the history by age at now; it reports whether a listing
	// is due.
	aged(now time.Time) bool
	// mark returns where a recording that starts now starts (Record);
	// unmark lets it go.
	mark(now time.Time) *mark
	unmark(m *mark)
	// view returns what a recording needs of the history, from the mark
	// from when given.
	view(from *mark, now time.Time) view
}

// mark is where a recording under way (Record) starts: the history's
// sequence number (rawWindow), checkpoint (classified) or listing's cut
// (lean) then, and when, in the recorder's generation gen (a session).
type mark struct {
	seq uint64
	cp  *checkpoint
	// cut is a lean window's mark.
	cut *cut
	at  time.Time
	gen uint64
}

// reachedRevs reports whether revisions now (cur, and per revision
// domain curs) reach want[i] of each domain i (one domain: want[0]).
func reachedRevs(cur uint64, curs, want []uint64) bool {
	if len(want) == 1 || len(curs) != len(want) {
		return cur >= slices.Max(want)
	}
	for i, rev := range want {
		if curs[i] < rev {
			return false
		}
	}
	return true
}

// classified is the history of a recorder that taps a Runtime's watches:
// each change is classified (rule RC2) as it comes and added to a window
// (window), unless the session's starting state holds it.
type classified struct {
	w           *window
	start       *startState
	controllers *owners
	sizes       *sizer
}

func (c *classified) reset(l *listing) {
	c.start = &l.start
	c.w.reset(l.start.base, l.at, l.start.rev, l.doms, slices.Clone(l.revs))
	l.start.base = nil // the window holds the state now; the listing's versions may go
}

func (c *classified) addEvents(evs []state.Event, at time.Time) {
	for i := range evs {
		c.add(&evs[i], at)
	}
}

func (c *classified) addRun(r run) {
	for i := range r.len() {
		ev := r.event(i, c.w.replaced(r.op(i), r.res(i)))
		c.add(&ev, time.Unix(0, r.at(i)))
	}
}

// add adds the change of ev, which came at at, unless it is no change (a
// marker) or the starting state holds it.
func (c *classified) add(ev *state.Event, at time.Time) {
	e, ok := classify(ev, c.controllers)
	if !ok || c.start.listedAlready(ev) {
		return
	}
	e.at = at
	e.size = entryOverhead
	if e.by != ByController {
		e.size = c.sizes.size(e.res)
	}
	c.w.add(&e)
}

func (c *classified) addWorld(ch *change) { c.w.add(ch) }

func (c *classified) reached(want []uint64) bool {
	return reachedRevs(c.w.curRev, c.w.curRevs, want)
}

func (c *classified) aged(now time.Time) bool {
	c.w.roll(now)
	return false
}

func (c *classified) mark(now time.Time) *mark { return &mark{cp: c.w.mark(now), at: now} }

func (c *classified) unmark(m *mark) { delete(c.w.marks, m.cp) }

func (c *classified) view(from *mark, _ time.Time) view {
	var cp *checkpoint
	if from != nil {
		cp = from.cp
	}
	return c.w.view(cp)
}
