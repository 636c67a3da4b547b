package access

import (
	"context"

	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// hiddenNote is what an explanation says where it left something out.
const hiddenNote = "resources of sensitive types this identity is not granted are left out"

// ExplainResource decides whether the subject may have the explanation of
// a resource of kind ns, typ: always for a type that is not sensitive (the
// explain page's grant suffices), and for a sensitive one only as a get of
// it (rule A2). A denial is audited and returned.
func (s *Subject) ExplainResource(ctx context.Context, ns, typ, id string) error {
	if !s.p.defs.Sensitive(typ) {
		return nil
	}
	a := Access{Identity: &s.id, Verb: Get, Namespace: ns, Type: typ, ID: id}
	d := s.decide(ctx, &a)
	if !d.Allowed {
		err := newDenied(&a, d)
		s.p.audit.denial(&a, s, d, err)
		return err
	}
	return nil
}

// visibleRef reports whether the subject may see a reference (nil is
// visible: nothing to hide).
func (s *Subject) visibleRef(ctx context.Context, r *trace.Ref) bool {
	return r == nil || s.Visible(ctx, r.Namespace, r.Type)
}

// VisibleRecord reports whether the subject may see a trace record: its
// resource and its cause are of types it may see (rule A2).
func (s *Subject) VisibleRecord(ctx context.Context, r *trace.Record) bool {
	return s.visibleRef(ctx, &r.Resource) && s.visibleRef(ctx, &r.Cause)
}

// ScrubResource removes from a resource's explanation what the subject
// may not see: the reconciles of changes that were about, or caused by,
// resources of sensitive types it is not granted, and what its
// controllers do about such resources.
func (s *Subject) ScrubResource(ctx context.Context, x *explain.Resource) {
	hid := false
	for i := range x.Changes {
		x.Changes[i].Reconciles, hid = s.scrubReconciles(ctx, x.Changes[i].Reconciles, hid)
	}
	for i := range x.Controllers {
		hid = s.scrubDoing(ctx, &x.Controllers[i].Doing) || hid
	}
	if hid {
		x.Notes = append(x.Notes, hiddenNote)
	}
}

// ScrubController removes from a controller's explanation what the
// subject may not see: its items, reconciles and current work about (or
// caused by) resources of sensitive types it is not granted.
func (s *Subject) ScrubController(ctx context.Context, x *explain.Controller) {
	hid := s.scrubDoing(ctx, &x.Doing)
	items := x.Items[:0]
	for _, it := range x.Items {
		if s.visibleRef(ctx, &it.Item) {
			items = append(items, it)
		} else {
			hid = true
		}
	}
	x.Items = items
	x.Recent, hid = s.scrubReconciles(ctx, x.Recent, hid)
	if hid {
		x.Notes = append(x.Notes, hiddenNote)
	}
}

func (s *Subject) scrubReconciles(ctx context.Context, rs []explain.Reconcile, hid bool) ([]explain.Reconcile, bool) {
	out := rs[:0]
	for _, r := range rs {
		if s.visibleRef(ctx, r.Item) && s.visibleRef(ctx, r.Cause) {
			out = append(out, r)
		} else {
			hid = true
		}
	}
	return out, hid
}

func (s *Subject) scrubDoing(ctx context.Context, d *explain.Doing) bool {
	if s.visibleRef(ctx, d.Resource) {
		return false
	}
	d.Resource, d.Finalizers, d.Detail = nil, nil, ""
	return true
}
