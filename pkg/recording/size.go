package recording

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
)

// sizeSample is how often a type's encoded size is measured: one change
// in sizeSample is encoded, the others are estimated from the last
// measure.
const sizeSample = 64

// unknownSize is the estimate of a resource its registry cannot encode.
const unknownSize = 512

// entryOverhead is what an entry costs beside its resource.
const entryOverhead = 96

// sizer estimates the encoded size of the recorded resources, per type,
// measuring one change in sizeSample. It is used under the recorder's
// lock.
type sizer struct {
	reg   *codec.Registry
	types map[resource.Type]*typeSize
	// lastType's size is last (nil before the first).
	lastType resource.Type
	last     *typeSize
}

type typeSize struct {
	n    uint64
	size int64
}

func (s *sizer) size(r resource.Resource) int64 {
	if r == nil {
		return entryOverhead
	}
	_, typ, _ := r.Metadata().Identity()
	ts := s.last
	if ts == nil || typ != s.lastType {
		ts = s.of(typ)
		s.lastType, s.last = typ, ts
	}
	if ts.n%sizeSample == 0 {
		if b, err := s.reg.Encode(r); err == nil {
			ts.size = int64(len(b))
		} else {
			ts.size = unknownSize
		}
	}
	ts.n++
	return ts.size + entryOverhead
}

// of returns the size of typ, adding it.
func (s *sizer) of(typ resource.Type) *typeSize {
	if s.types == nil {
		s.types = map[resource.Type]*typeSize{}
	}
	ts := s.types[typ]
	if ts == nil {
		ts = &typeSize{}
		s.types[typ] = ts
	}
	return ts
}
