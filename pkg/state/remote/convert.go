package remote

import (
	"fmt"
	"regexp"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// unixToYear1 is the number of seconds from January 1, year 1 to the Unix
// epoch: the wire's times count from year 1, so that 0 is the zero time.
const unixToYear1 int64 = 62135596800

// timeToPB returns t on the wire: seconds since year 1 and nanoseconds.
func timeToPB(t time.Time) (int64, int32) {
	if t.IsZero() {
		return 0, 0
	}
	return t.Unix() + unixToYear1, int32(t.Nanosecond())
}

// timeFromPB returns the time of seconds since year 1 and nanoseconds.
func timeFromPB(sec int64, nsec int32) (time.Time, error) {
	if nsec < 0 || nsec >= int32(time.Second) {
		return time.Time{}, fmt.Errorf("time with %d nanoseconds", nsec)
	}
	if sec == 0 && nsec == 0 {
		return time.Time{}, nil
	}
	return time.Unix(sec-unixToYear1, int64(nsec)), nil
}

// metadataToPB returns md on the wire; without its namespace and type when
// inKind is set (the answers of List and Watch: the request names them).
func metadataToPB(md *resource.Metadata, inKind bool) *pb.Metadata {
	m := &pb.Metadata{
		Id:          md.ID(),
		Version:     md.Version().Value(),
		Phase:       pb.Phase(md.Phase()),
		Owner:       md.Owner(),
		Finalizers:  []string(*md.Finalizers()),
		Labels:      md.Labels().Raw(),
		Annotations: md.Annotations().Raw(),
	}
	if !inKind {
		m.Namespace, m.Type = md.Namespace(), md.Type()
	}
	m.CreatedSeconds, m.CreatedNanos = timeToPB(md.Created())
	m.UpdatedSeconds, m.UpdatedNanos = timeToPB(md.Updated())
	return m
}

// metadataFromPB returns the metadata m carries (in kind, when m leaves
// its namespace and type empty and kind is not nil), or an error naming
// what is wrong with it: no metadata, an empty identity, an unknown phase,
// a bad time, an empty or repeated finalizer.
func metadataFromPB(m *pb.Metadata, kind resource.Kind) (resource.Metadata, error) {
	if m == nil {
		return resource.Metadata{}, fmt.Errorf("resource without metadata")
	}
	ns, typ := m.Namespace, m.Type
	if kind != nil && ns == "" && typ == "" {
		ns, typ = kind.Namespace(), kind.Type()
	}
	md := resource.NewMetadata(ns, typ, m.Id, resource.NewVersion(m.Version))
	if err := resource.ValidatePointer(&md); err != nil {
		return resource.Metadata{}, err
	}
	name := func() string { return resource.PointerString(&md) }
	switch m.Phase {
	case pb.Phase_PHASE_RUNNING, pb.Phase_PHASE_TEARING_DOWN:
		md.SetPhase(resource.Phase(m.Phase))
	default:
		return resource.Metadata{}, fmt.Errorf("%s: unknown phase %d", name(), m.Phase)
	}
	md.ReplaceOwner(m.Owner)
	created, err := timeFromPB(m.CreatedSeconds, m.CreatedNanos)
	if err != nil {
		return resource.Metadata{}, fmt.Errorf("%s: created: %w", name(), err)
	}
	updated, err := timeFromPB(m.UpdatedSeconds, m.UpdatedNanos)
	if err != nil {
		return resource.Metadata{}, fmt.Errorf("%s: updated: %w", name(), err)
	}
	md.SetCreated(created)
	md.SetUpdated(updated)
	for _, f := range m.Finalizers {
		if f == "" || !md.Finalizers().Add(f) {
			return resource.Metadata{}, fmt.Errorf("%s: empty or repeated finalizer %q", name(), f)
		}
	}
	for k, v := range m.Labels {
		md.Labels().Set(k, v)
	}
	for k, v := range m.Annotations {
		md.Annotations().Set(k, v)
	}
	return md, nil
}

// coder turns resources into messages and back with a codec registry.
type coder struct {
	reg *codec.Registry
}

// encode returns r on the wire (without its namespace and type when
// inKind is set), with its spec rendered as JSON too when withJSON is set.
func (c coder) encode(r resource.Resource, inKind, withJSON bool) (*pb.Resource, error) {
	spec, f, err := c.reg.AppendSpec(nil, r)
	if err != nil {
		return nil, err
	}
	out := &pb.Resource{Metadata: metadataToPB(r.Metadata(), inKind), Spec: spec, SpecFormat: uint32(f)}
	if withJSON {
		if out.SpecJson, err = specJSON(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decode returns the resource m carries, decoded by the registry; kind,
// when not nil, is the kind of a resource whose metadata does not name it.
// It is for what a state stored: a JSON spec's keys its type has no field
// for are dropped (see decodeInput for a write's spec).
func (c coder) decode(m *pb.Resource, kind resource.Kind) (resource.Resource, error) {
	return c.decodeWith(c.reg.DecodeSpec, m, kind)
}

// decodeInput is decode for the resource of a write request: a JSON spec
// with a key its type has no field for, or one matching a field only by
// case, is refused (codec.Registry.DecodeSpecInput).
func (c coder) decodeInput(m *pb.Resource) (resource.Resource, error) {
	return c.decodeWith(c.reg.DecodeSpecInput, m, nil)
}

func (c coder) decodeWith(decodeSpec func(resource.Metadata, codec.Format, []byte) (resource.Resource, error),
	m *pb.Resource, kind resource.Kind) (resource.Resource, error) {
	if m == nil {
		return nil, fmt.Errorf("no resource")
	}
	md, err := metadataFromPB(m.Metadata, kind)
	if err != nil {
		return nil, err
	}
	if m.SpecFormat > 255 {
		return nil, fmt.Errorf("%s: spec format %d out of range", resource.PointerString(&md), m.SpecFormat)
	}
	return decodeSpec(md, codec.Format(m.SpecFormat), m.Spec)
}

func pointerToPB(p resource.Pointer) *pb.Pointer {
	return &pb.Pointer{Namespace: p.Namespace(), Type: p.Type(), Id: p.ID()}
}

func kindToPB(k resource.Kind) *pb.Kind {
	return &pb.Kind{Namespace: k.Namespace(), Type: k.Type()}
}

// pointerFromPB returns the pointer p carries, or an invalid-class error.
func pointerFromPB(p *pb.Pointer) (resource.Pointer, error) {
	if p == nil {
		return nil, state.NewInvalidError(nil, "remote: request without a resource pointer")
	}
	ptr := resource.NewPointer(p.Namespace, p.Type, p.Id)
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, state.NewInvalidError(nil, "remote: %w", err)
	}
	return ptr, nil
}

// kindFromPB returns the kind k carries, or an invalid-class error.
func kindFromPB(k *pb.Kind) (resource.Kind, error) {
	if k == nil {
		return nil, state.NewInvalidError(nil, "remote: request without a resource kind")
	}
	kind := resource.NewKind(k.Namespace, k.Type)
	if err := resource.ValidateKind(kind); err != nil {
		return nil, state.NewInvalidError(nil, "remote: %w", err)
	}
	return kind, nil
}

// queriesToPB returns label queries on the wire: their union (rule S15),
// an empty query included (it selects everything).
func queriesToPB(qs resource.LabelQueries) []*pb.LabelQuery {
	if len(qs) == 0 {
		return nil
	}
	out := make([]*pb.LabelQuery, 0, len(qs))
	for _, q := range qs {
		m := &pb.LabelQuery{Terms: make([]*pb.LabelTerm, 0, len(q.Terms))}
		for _, t := range q.Terms {
			m.Terms = append(m.Terms, &pb.LabelTerm{Key: t.Key, Op: uint32(t.Op), Values: t.Value, Invert: t.Invert})
		}
		out = append(out, m)
	}
	return out
}

// maxLabelOp is the highest resource.LabelOp the server knows.
const maxLabelOp = resource.LabelOpLTENumeric

// queriesFromPB returns the label queries qs carries, or an error naming
// an unknown operation.
func queriesFromPB(qs []*pb.LabelQuery) (resource.LabelQueries, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	out := make(resource.LabelQueries, 0, len(qs))
	for _, q := range qs {
		lq := resource.LabelQuery{Terms: make([]resource.LabelTerm, 0, len(q.GetTerms()))}
		for _, t := range q.GetTerms() {
			if t.Op > uint32(maxLabelOp) {
				return nil, fmt.Errorf("label term on %q: unknown operation %d", t.Key, t.Op)
			}
			lq.Terms = append(lq.Terms, resource.LabelTerm{Key: t.Key, Op: resource.LabelOp(t.Op), Value: t.Values, Invert: t.Invert})
		}
		out = append(out, lq)
	}
	return out, nil
}

// idRegexpToPB returns the ID query's regular expression, "" for none.
func idRegexpToPB(q resource.IDQuery) string {
	if q.Regexp == nil {
		return ""
	}
	return q.Regexp.String()
}

// maxRegexpLen bounds the ID regular expression of a request.
const maxRegexpLen = 4096

// idQueryFromPB compiles an ID query's regular expression.
func idQueryFromPB(s string) (resource.IDQuery, error) {
	if s == "" {
		return resource.IDQuery{}, nil
	}
	if len(s) > maxRegexpLen {
		return resource.IDQuery{}, fmt.Errorf("ID regular expression of %d bytes (at most %d)", len(s), maxRegexpLen)
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return resource.IDQuery{}, fmt.Errorf("ID regular expression: %w", err)
	}
	return resource.IDQuery{Regexp: re}, nil
}
