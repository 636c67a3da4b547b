package explain

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// reconcileKey pairs a ReconcileStart with its ReconcileEnd: the same
// controller, item and op (a Controller's passes have no item).
type reconcileKey struct {
	controller string
	item       trace.Ref
	op         string
}

func startKey(e *trace.Record) reconcileKey {
	item := e.Resource
	item.Version, item.Writer = 0, ""
	return reconcileKey{e.Controller, item, e.Op}
}

// pairReconciles returns every reconcile of records (oldest first), each
// start paired with the next end of the same controller, item and op.
func pairReconciles(records []trace.Record) []Reconcile {
	var out []Reconcile
	open := map[reconcileKey]int{} // index in out of the running reconcile
	for i := range records {
		e := &records[i]
		switch e.Type {
		case trace.ReconcileStart:
			k := startKey(e)
			if j, ok := open[k]; ok {
				out[j].Outcome = "unknown" // its end was not traced
			}
			r := Reconcile{Seq: e.Seq, Controller: e.Controller, Op: e.Op, Causes: e.Causes, Start: e.Time, Wait: e.Duration, Outcome: "running"}
			if !e.Resource.IsZero() {
				item := k.item
				r.Item = &item
			}
			if !e.Cause.IsZero() {
				c := e.Cause
				r.Cause = &c
			}
			open[k] = len(out)
			out = append(out, r)
		case trace.ReconcileEnd:
			k := startKey(e)
			j, ok := open[k]
			if !ok {
				continue // its start is older than the trace
			}
			delete(open, k)
			out[j].Duration, out[j].Outcome, out[j].Error = e.Duration, e.Outcome.String(), e.Error
		}
	}
	return out
}

// commitOp names what the Commit e did. A Modify's commit is named by its
// version: version 1 is a create (rule S1: a create stores version 1), a
// later one an update; an unknown version (0) leaves it "modify".
func commitOp(e *trace.Record) string {
	if e.Op != "modify" {
		return e.Op
	}
	switch v := e.Resource.Version; {
	case v == 1:
		return "create"
	case v > 1:
		return "update"
	}
	return e.Op
}

// Reconciles returns the last n reconciles of controller in records (a
// trace, oldest first), newest first, each with its cause and, once it
// ended, its duration and outcome. n <= 0 means all.
func Reconciles(records []trace.Record, controller string, n int) []Reconcile {
	var mine []trace.Record
	for i := range records {
		if e := &records[i]; e.Controller == controller && (e.Type == trace.ReconcileStart || e.Type == trace.ReconcileEnd) {
			mine = append(mine, *e)
		}
	}
	return newestFirst(pairReconciles(mine), n)
}

// Changes returns the last n changes of the resource r (its namespace,
// type and ID) in records (a trace, oldest first), newest first: the
// versions committed by controllers (Commit records, with their writer and
// operation) and the changes routed to controllers that no traced commit
// explains (writes from outside the Runtime), each with the reconciles
// that ran with it as their newest cause. n <= 0 means all.
//
// A commit and the routes of the same change are one change: the same
// version, and both a destroy or neither (a destroy carries the version it
// destroyed, which is a change of its own beside the write of that
// version).
func Changes(records []trace.Record, r trace.Ref, n int) []Change {
	var out []Change
	byChange := map[changeKey]int{} // index in out; version 0 = unknown
	var pairs []trace.Record
	for i := range records {
		e := &records[i]
		switch e.Type {
		case trace.Commit, trace.Route:
			if !e.Resource.SameResource(r) {
				continue
			}
			k := changeKey{e.Resource.Version, isDestroy(e.Op)}
			if j, ok := byChange[k]; ok && k.version != 0 {
				if e.Type == trace.Commit && out[j].Writer == "" {
					out[j].Writer, out[j].Op = e.Controller, commitOp(e)
				}
				continue
			}
			c := Change{Seq: e.Seq, Time: e.Time, Version: k.version, Op: e.Op, Writer: e.Resource.Writer}
			if e.Type == trace.Commit {
				c.Writer, c.Op = e.Controller, commitOp(e)
			}
			byChange[k] = len(out)
			out = append(out, c)
		case trace.ReconcileStart, trace.ReconcileEnd:
			pairs = append(pairs, *e)
		}
	}
	for _, rc := range pairReconciles(pairs) {
		if rc.Cause == nil || !rc.Cause.SameResource(r) {
			continue
		}
		// A reconcile caused by a destroy names the version destroyed: it
		// is the destroy's when it started after the destroy was traced.
		j, ok := byChange[changeKey{rc.Cause.Version, true}]
		if !ok || rc.Seq < out[j].Seq {
			j, ok = byChange[changeKey{rc.Cause.Version, false}]
		}
		if ok {
			out[j].Reconciles = append(out[j].Reconciles, rc)
		}
	}
	return newestFirst(out, n)
}

// changeKey tells the changes of one resource apart: its version, and
// whether it was destroyed (a destroy names the version it destroyed).
type changeKey struct {
	version   uint64
	destroyed bool
}

// isDestroy reports whether op, a commit's write or a route's change, is a
// destroy.
func isDestroy(op string) bool { return op == "destroy" || op == "destroyed" }

// newestFirst returns the last n of s (all for n <= 0), reversed.
func newestFirst[T any](s []T, n int) []T {
	if n > 0 && len(s) > n {
		s = s[len(s)-n:]
	}
	s = slices.Clone(s)
	slices.Reverse(s)
	if s == nil {
		s = []T{}
	}
	return s
}
