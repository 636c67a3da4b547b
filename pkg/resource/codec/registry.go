package codec

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// Registry knows how to encode and decode the resource types registered
// with it. The zero value is an empty registry ready for use; see also
// [NewRegistry]. A Registry is safe for concurrent use.
type Registry struct {
	// types maps a resource type to its entry. The map is never modified
	// once published: registering publishes a new one (under mu), so
	// Encode and Decode read it with one atomic load.
	types atomic.Pointer[map[resource.Type]*entry]
	mu    sync.Mutex // serializes registrations
	// defs holds the definition of every registered type (see
	// [Registry.Definitions]); a type's definition is added before its
	// entry is published.
	defs definition.Registry
}

// Definitions returns the definitions of the registered types: each
// registration records its type's definition (see package definition),
// so that the types a registry encodes and the types it describes are one
// list. Adding to it directly describes a type without making it
// encodable.
func (reg *Registry) Definitions() *definition.Registry { return &reg.defs }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// entry is what a registry knows about one resource type.
type entry struct {
	// goType is the Go type of the type's resources; Encode refuses
	// another.
	goType reflect.Type
	// format is the format its specs are written in.
	format Format
	// specType is the Go type of its specs when they are JSON (the type
	// DecodeSpecInput checks keys against); nil otherwise.
	specType reflect.Type
	// encodeSpec appends the spec of r (of goType) to dst and returns the
	// format it used.
	encodeSpec func(dst []byte, r resource.Resource) ([]byte, Format, error)
	// decode returns a new resource of goType with metadata md and the spec
	// decoded from data, written in format f.
	decode func(md resource.Metadata, f Format, data []byte) (resource.Resource, error)
	// newEmpty returns a new resource of goType with metadata md and a
	// zero spec, and a pointer to its spec; nil for a type that decodes
	// its spec itself (see New).
	newEmpty func(md resource.Metadata) (resource.Resource, any, error)
}

// lookup returns the entry of typ, nil when typ is not registered.
func (reg *Registry) lookup(typ resource.Type) *entry {
	m := reg.types.Load()
	if m == nil {
		return nil
	}
	return (*m)[typ]
}

// add publishes e as the entry of typ, and the definition described
// gives (see definition.Of) with defaultNS. Registering a type again with
// the same Go type is a no-op; with another Go type it is an error.
func (reg *Registry) add(typ resource.Type, e *entry, defaultNS resource.Namespace, described any) error {
	if typ == "" {
		return fmt.Errorf("codec: register %s: empty resource type", e.goType)
	}
	def, err := definition.Of(typ, defaultNS, e.format.encodingName(), described)
	if err != nil {
		return fmt.Errorf("codec: register %q (%s): %w", typ, e.goType, err)
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	var old map[resource.Type]*entry
	if m := reg.types.Load(); m != nil {
		old = *m
	}
	if prev, ok := old[typ]; ok {
		if prev.goType == e.goType && prev.format == e.format {
			return nil
		}
		if prev.goType == e.goType {
			return fmt.Errorf("codec: resource type %q is registered with its specs in %s, not %s", typ, prev.format, e.format)
		}
		return fmt.Errorf("codec: resource type %q is registered as %s, not %s", typ, prev.goType, e.goType)
	}
	if err := reg.defs.Add(def); err != nil {
		return fmt.Errorf("codec: register %q (%s): %w", typ, e.goType, err)
	}
	m := make(map[resource.Type]*entry, len(old)+1)
	maps.Copy(m, old)
	m[typ] = e
	reg.types.Store(&m)
	return nil
}

// Types returns the registered resource types, sorted.
func (reg *Registry) Types() []resource.Type {
	m := reg.types.Load()
	if m == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(*m))
}

// Registered reports whether typ is registered.
func (reg *Registry) Registered(typ resource.Type) bool { return reg.lookup(typ) != nil }

// ValidateType returns nil when typ is registered and an
// [*UnknownTypeError] (of the invalid class, naming the type and how to
// register it) otherwise. A state that encodes with reg implements
// state.TypeValidator with it.
func (reg *Registry) ValidateType(typ resource.Type) error {
	if reg.lookup(typ) == nil {
		return &UnknownTypeError{Type: typ}
	}
	return nil
}

// Register registers the typed resource type typed.Resource[S, D] under
// the type of D's definition. It fails for an empty type, a type already
// registered with another Go type, a spec type that has no lossless
// encoding (see the package documentation), and a spec type that cannot be
// deep-copied (a state refuses to store one: see package typed).
// Registering the same type twice is a no-op.
func Register[S any, D typed.DefinitionProvider](reg *Registry) error {
	def := (*typed.Resource[S, D])(nil).Definition()
	goType := reflect.TypeFor[*typed.Resource[S, D]]()
	var zero S
	if err := typed.New[S, D](resource.Metadata{}, zero).CopyError(); err != nil {
		return fmt.Errorf("codec: register %q (%s): %w", def.Type, goType, err)
	}
	sc, err := newSpecCodec[S]()
	if err != nil {
		return fmt.Errorf("codec: register %q (%s): %w", def.Type, goType, err)
	}
	var described D
	return reg.add(def.Type, &entry{
		goType:   goType,
		format:   sc.format(),
		specType: jsonSpecType(sc.own, reflect.TypeFor[S]()),
		encodeSpec: func(dst []byte, r resource.Resource) ([]byte, Format, error) {
			return sc.encode(dst, r.(*typed.Resource[S, D]).TypedSpec())
		},
		decode: func(md resource.Metadata, f Format, data []byte) (resource.Resource, error) {
			r := typed.New[S, D](resource.Metadata{}, zero)
			*r.Metadata() = md
			if err := sc.decode(f, data, r.TypedSpec()); err != nil {
				return nil, err
			}
			return r, nil
		},
		newEmpty: newTyped[S, D],
	}, def.DefaultNamespace, described)
}

// MustRegister is [Register] that panics on error, for package
// initialization.
func MustRegister[S any, D typed.DefinitionProvider](reg *Registry) {
	if err := Register[S, D](reg); err != nil {
		panic(err)
	}
}

// RegisterType registers a resource type by a constructor: newResource
// returns an empty resource (zero spec) carrying the metadata it is given.
// Either the resource implements [SpecMarshaler] and [SpecUnmarshaler]
// (it then encodes and decodes its spec itself), or its Spec method
// returns a non-nil pointer to its spec, which is encoded as JSON, or by
// the spec's own [SpecMarshaler], and decoded in place. RegisterType calls
// newResource once to learn the resource's Go type and check these
// conditions; it fails when they do not hold, for an empty type, for a
// type already registered with another Go type, and for a resource that
// reports it cannot be deep-copied ([resource.CopyChecker]).
func (reg *Registry) RegisterType(typ resource.Type, newResource func(resource.Metadata) resource.Resource) error {
	if newResource == nil {
		return fmt.Errorf("codec: register %q: nil constructor", typ)
	}
	probe, err := construct(newResource, resource.NewMetadata("probe", typ, "probe", resource.VersionUndefined))
	if err != nil {
		return fmt.Errorf("codec: register %q: %w", typ, err)
	}
	goType := reflect.TypeOf(probe)
	if cc, ok := probe.(resource.CopyChecker); ok {
		if err := cc.CopyError(); err != nil {
			return fmt.Errorf("codec: register %q (%s): %w", typ, goType, err)
		}
	}
	if own, ok := probe.(interface {
		SpecMarshaler
		SpecUnmarshaler
	}); ok {
		_ = own
		return reg.add(typ, &entry{
			goType:     goType,
			format:     FormatOwn,
			encodeSpec: encodeOwnResource,
			decode:     decodeOwnResource(newResource),
		}, "", probe)
	}
	sc, err := pointerSpecCodec(probe)
	if err != nil {
		return fmt.Errorf("codec: register %q (%s): %w", typ, goType, err)
	}
	return reg.add(typ, &entry{
		goType:   goType,
		format:   sc.format(),
		specType: jsonSpecType(sc.own, sc.ptrType.Elem()),
		encodeSpec: func(dst []byte, r resource.Resource) ([]byte, Format, error) {
			return sc.encode(dst, r.Spec())
		},
		decode: func(md resource.Metadata, f Format, data []byte) (resource.Resource, error) {
			r, err := construct(newResource, md)
			if err != nil {
				return nil, err
			}
			if err := sc.decode(f, data, r.Spec()); err != nil {
				return nil, err
			}
			return r, nil
		},
		newEmpty: func(md resource.Metadata) (resource.Resource, any, error) {
			r, err := construct(newResource, md)
			if err != nil {
				return nil, nil, err
			}
			return r, r.Spec(), nil
		},
	}, "", probe)
}

// jsonSpecType is an entry's specType: t, unless the spec encodes
// itself.
func jsonSpecType(own bool, t reflect.Type) reflect.Type {
	if own {
		return nil
	}
	return t
}

// newTyped is the newEmpty of a typed resource type: a
// *typed.Resource[S, D] carrying md, and its TypedSpec.
func newTyped[S any, D typed.DefinitionProvider](md resource.Metadata) (resource.Resource, any, error) {
	var zero S
	r := typed.New[S, D](resource.Metadata{}, zero)
	*r.Metadata() = md
	return r, r.TypedSpec(), nil
}

// New returns a new resource of the Go type registered for md's type,
// carrying md, with a zero spec, and a pointer to that spec, which a
// decoder of another format (package yamlcodec) fills in place. An
// unregistered type is an [*UnknownTypeError]; a type registered with a
// constructor whose resource encodes its spec itself ([SpecMarshaler] on
// the resource) has no spec to fill, and is an error.
func (reg *Registry) New(md resource.Metadata) (r resource.Resource, spec any, err error) {
	e := reg.lookup(md.Type())
	if e == nil {
		return nil, nil, &UnknownTypeError{Type: md.Type()}
	}
	if e.newEmpty == nil {
		return nil, nil, fmt.Errorf("codec: type %q (%s) encodes its spec itself: it has no spec to fill", md.Type(), e.goType)
	}
	return e.newEmpty(md)
}

// construct calls newResource(md) and checks the result: a non-nil
// resource carrying md's identity. A panic in newResource is an error.
func construct(newResource func(resource.Metadata) resource.Resource, md resource.Metadata) (r resource.Resource, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("constructor panicked: %v", p)
		}
	}()
	r = newResource(md)
	if usercode.IsNil(r) {
		return nil, fmt.Errorf("constructor returned no resource")
	}
	got := r.Metadata()
	if got == nil {
		return nil, fmt.Errorf("constructor returned %T with nil metadata", r)
	}
	if got.Type() != md.Type() || got.ID() != md.ID() || got.Namespace() != md.Namespace() {
		return nil, fmt.Errorf("constructor returned %s for %s: it must keep the metadata it is given",
			resource.PointerString(got), resource.PointerString(md))
	}
	*got = md
	return r, nil
}

// encodeOwnResource encodes the spec of a resource that implements
// SpecMarshaler itself.
func encodeOwnResource(dst []byte, r resource.Resource) ([]byte, Format, error) {
	return appendOwn(dst, r.(SpecMarshaler))
}

// decodeOwnResource decodes a resource that implements SpecUnmarshaler
// itself.
func decodeOwnResource(newResource func(resource.Metadata) resource.Resource) func(resource.Metadata, Format, []byte) (resource.Resource, error) {
	return func(md resource.Metadata, f Format, data []byte) (resource.Resource, error) {
		r, err := construct(newResource, md)
		if err != nil {
			return nil, err
		}
		if f != FormatOwn {
			return nil, fmt.Errorf("spec written as %s, but %T decodes its own format", f, r)
		}
		if err := callUnmarshal(r.(SpecUnmarshaler), data); err != nil {
			return nil, err
		}
		return r, nil
	}
}
