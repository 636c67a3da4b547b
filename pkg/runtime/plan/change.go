package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/codec/yamlcodec"
	"github.com/resgraph/resgraph/pkg/state"
)

// Change is a proposed change of the state, as an outside writer (a user,
// the daemon's own code) would make it.
type Change struct {
	// Set are resources to make exist as given: created, or their spec,
	// labels and annotations written over the stored resource.
	Set []resource.Resource
	// Remove are resources to remove: torn down, and destroyed once their
	// finalizers are gone.
	Remove []resource.Pointer
	// sensitive is the sensitivity of the registry ParseChange read the
	// change with (nil for a Change built otherwise): a plan of it never
	// prints those types' spec values, WithSensitive or not.
	sensitive func(resource.Type) bool
}

// file is a change file's form (YAML, or JSON, which YAML reads too).
type file struct {
	Set    []fileResource `yaml:"set"`
	Remove []filePointer  `yaml:"remove"`
}

type filePointer struct {
	Namespace string `yaml:"namespace"`
	Type      string `yaml:"type"`
	ID        string `yaml:"id"`
}

type fileResource struct {
	filePointer `yaml:",inline"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
	Spec        any               `yaml:"spec"`
}

// ParseChange reads a change file:
//
//	set:                              # resources to create or update
//	  - type: LinkSpecs.net.resgraph.dev   # a type, or an alias of its definition
//	    namespace: network            # default: the type's default namespace
//	    id: eth1
//	    labels: {role: uplink}
//	    spec: {mtu: 9000}             # the spec's JSON form, in YAML
//	remove:                           # resources to remove
//	  - {type: linkspec, id: eth2}
//
// reg knows the types (and their aliases, by its definitions) and decodes
// the specs, which must be in JSON form (a type whose specs are encoded
// otherwise cannot be written in a change file). A type reg does not know,
// a spec that does not decode or a missing ID is an error of the invalid
// class (state.IsInvalidError) naming the entry. A plan of the change
// never prints the spec values of the types reg's definitions mark
// sensitive (rule PL4).
func ParseChange(r io.Reader, reg *codec.Registry) (Change, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Change{}, err
	}
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && err != io.EOF {
		return Change{}, state.NewInvalidError(nil, "plan: change file: %w", err)
	}
	c := Change{sensitive: reg.Definitions().Sensitive}
	for i, fr := range f.Set {
		res, err := fr.resource(reg)
		if err != nil {
			return Change{}, state.NewInvalidError(nil, "plan: change file: set[%d]: %w", i, err)
		}
		c.Set = append(c.Set, res)
	}
	for i, fp := range f.Remove {
		ptr, err := fp.pointer(reg)
		if err != nil {
			return Change{}, state.NewInvalidError(nil, "plan: change file: remove[%d]: %w", i, err)
		}
		c.Remove = append(c.Remove, ptr)
	}
	return c, nil
}

// pointer resolves the entry's type (or alias) and namespace.
func (p filePointer) pointer(reg *codec.Registry) (resource.Pointer, error) {
	if p.Type == "" || p.ID == "" {
		return nil, fmt.Errorf("an entry needs a type and an id")
	}
	d, err := reg.Definitions().Resolve(p.Type)
	if err != nil {
		return nil, err
	}
	ns := p.Namespace
	if ns == "" {
		ns = d.DefaultNamespace
	}
	if ns == "" {
		return nil, fmt.Errorf("%s(%s): no namespace, and the type has no default", d.Type, p.ID)
	}
	return resource.NewPointer(ns, d.Type, p.ID), nil
}

func (fr fileResource) resource(reg *codec.Registry) (resource.Resource, error) {
	ptr, err := fr.pointer(reg)
	if err != nil {
		return nil, err
	}
	if f, _ := reg.SpecFormat(ptr.Type()); f != codec.FormatJSON {
		return nil, fmt.Errorf("%s: the type's specs are not encoded as JSON: a change file cannot write them", resource.PointerString(ptr))
	}
	spec, err := json.Marshal(yamlcodec.JSONable(fr.Spec))
	if err != nil {
		return nil, fmt.Errorf("%s: spec: %w", resource.PointerString(ptr), err)
	}
	if fr.Spec == nil {
		spec = []byte("{}")
	}
	md := resource.NewMetadata(ptr.Namespace(), ptr.Type(), ptr.ID(), resource.VersionUndefined)
	for k, v := range fr.Labels {
		md.Labels().Set(k, v)
	}
	for k, v := range fr.Annotations {
		md.Annotations().Set(k, v)
	}
	return reg.DecodeSpec(md, codec.FormatJSON, spec)
}
