package codec

import (
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
)

// reader reads the metadata of an encoding. The metadata is converted to
// one string up front, so that every string of it is a substring of that
// one, at the cost of one allocation.
type reader struct {
	s   string
	pos int
}

// uvarint reads a canonical unsigned varint (no superfluous zero bytes).
func (r *reader) uvarint() (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if r.pos >= len(r.s) {
			return 0, errFormat("truncated varint at %d", r.pos)
		}
		b := r.s[r.pos]
		r.pos++
		if shift == 63 && b > 1 {
			return 0, errFormat("varint overflows at %d", r.pos)
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			if b == 0 && shift > 0 {
				return 0, errFormat("non-canonical varint at %d", r.pos)
			}
			return v, nil
		}
	}
	return 0, errFormat("varint overflows at %d", r.pos)
}

// count reads a count of items that take at least per bytes each.
func (r *reader) count(per int) (int, error) {
	n, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64((len(r.s)-r.pos)/per) {
		return 0, errFormat("count %d exceeds the data", n)
	}
	return int(n), nil
}

func (r *reader) str() (string, error) {
	n, err := r.count(1)
	if err != nil {
		return "", err
	}
	s := r.s[r.pos : r.pos+n]
	r.pos += n
	return s, nil
}

func (r *reader) time() (time.Time, error) {
	if r.pos >= len(r.s) {
		return time.Time{}, errFormat("truncated time")
	}
	flag := r.s[r.pos]
	r.pos++
	switch flag {
	case 0:
		return time.Time{}, nil
	case 1:
	default:
		return time.Time{}, errFormat("bad time flag %d", flag)
	}
	sec, err := r.uvarint()
	if err != nil {
		return time.Time{}, err
	}
	nsec, err := r.uvarint()
	if err != nil {
		return time.Time{}, err
	}
	if nsec >= uint64(time.Second) {
		return time.Time{}, errFormat("nanoseconds %d out of range", nsec)
	}
	t := time.Unix(unzigzag(sec), int64(nsec))
	if t.IsZero() {
		return time.Time{}, errFormat("zero time not written as such")
	}
	return t, nil
}

// strMap reads labels or annotations into set: keys strictly increasing.
func (r *reader) strMap(set func(k, v string)) error {
	n, err := r.count(2)
	if err != nil {
		return err
	}
	prev := ""
	for i := range n {
		k, err := r.str()
		if err != nil {
			return err
		}
		v, err := r.str()
		if err != nil {
			return err
		}
		if i > 0 && k <= prev {
			return errFormat("keys not strictly increasing (%q after %q)", k, prev)
		}
		prev = k
		set(k, v)
	}
	return nil
}

// decodeMeta decodes the metadata part of an encoding (see format.go).
// It is long because it reads the fields one after the other, in the
// order of the layout; each read is one helper call and one check.
func decodeMeta(s string) (resource.Metadata, error) {
	r := &reader{s: s}
	var ids [4]string // namespace, type, ID, owner
	for i := range ids {
		v, err := r.str()
		if err != nil {
			return resource.Metadata{}, err
		}
		ids[i] = v
	}
	if ids[0] == "" || ids[1] == "" || ids[2] == "" {
		return resource.Metadata{}, errFormat("empty namespace, type or ID")
	}
	ver, err := r.uvarint()
	if err != nil {
		return resource.Metadata{}, err
	}
	phase, err := r.uvarint()
	if err != nil {
		return resource.Metadata{}, err
	}
	if p := resource.Phase(phase); p != resource.PhaseRunning && p != resource.PhaseTearingDown {
		return resource.Metadata{}, errFormat("unknown phase %d", phase)
	}
	md := resource.NewMetadata(ids[0], ids[1], ids[2], resource.NewVersion(ver))
	md.SetPhase(resource.Phase(phase))
	md.ReplaceOwner(ids[3])
	for _, set := range []func(time.Time){md.SetCreated, md.SetUpdated} {
		t, err := r.time()
		if err != nil {
			return resource.Metadata{}, err
		}
		set(t)
	}
	if err := r.finalizers(&md); err != nil {
		return resource.Metadata{}, err
	}
	if err := r.strMap(md.Labels().Set); err != nil {
		return resource.Metadata{}, err
	}
	if err := r.strMap(md.Annotations().Set); err != nil {
		return resource.Metadata{}, err
	}
	if r.pos != len(r.s) {
		return resource.Metadata{}, errFormat("%d bytes after the metadata", len(r.s)-r.pos)
	}
	return md, nil
}

// finalizers reads the finalizers into md, keeping their order (and any
// duplicates).
func (r *reader) finalizers(md *resource.Metadata) error {
	n, err := r.count(1)
	if err != nil || n == 0 {
		return err
	}
	fins := make(resource.Finalizers, n)
	for i := range fins {
		if fins[i], err = r.str(); err != nil {
			return err
		}
	}
	*md.Finalizers() = fins
	return nil
}
