package xform

import (
	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// Mapping is a controller's mapping from an input to its output: exactly
// one of Plain (MapMetadataFunc: one output per input) and Optional
// (MapMetadataOptionalFunc: zero or one) is set (the controllers' checks
// refuse anything else, rule G2).
type Mapping[I, O typed.ResourceWithDefinition] struct {
	Plain    func(I) O
	Optional func(I) optional.Optional[O]
	// Out is the output kind.
	Out resource.Kind
}

// Check returns the [Invalid] error of a mapping that is neither or both.
func (m Mapping[I, O]) Check() error {
	switch {
	case m.Plain == nil && m.Optional == nil:
		return Invalid("Settings.MapMetadataFunc and Settings.MapMetadataOptionalFunc are both nil: exactly one must be set")
	case m.Plain != nil && m.Optional != nil:
		return Invalid("Settings.MapMetadataFunc and Settings.MapMetadataOptionalFunc are both set: exactly one must be")
	}
	return nil
}

// Map maps in to its output; ok is false when the optional mapping says
// None (the input has no output). The output is checked ([CheckMapped]).
func (m Mapping[I, O]) Map(logger *zap.Logger, in I) (out O, ok bool, err error) {
	md := in.Metadata()
	name := "MapMetadataFunc"
	if f := m.Optional; f != nil {
		name = "MapMetadataOptionalFunc"
		opt, err := CallValue(logger, name, md, func() optional.Optional[O] { return f(in) })
		if err != nil {
			return out, false, err
		}
		if out, ok = opt.Get(); !ok {
			return out, false, nil
		}
	} else {
		out, err = CallValue(logger, name, md, func() O { return m.Plain(in) })
		if err != nil {
			return out, false, err
		}
	}
	if err := CheckMapped(name, out, m.Out); err != nil {
		return out, false, err
	}
	return out, true, nil
}
