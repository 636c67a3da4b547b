package plan

import (
	"encoding/json"
	"fmt"
	"io"

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
	// where names the entry in errors: "set[0]", "document 2".
	where string
}

// ParseChange reads a change file:
//
//	set:                              # resources to create or update
//	  - type: LinkSpecs.net.resgraph.dev   # a type, or an alias of its definition
//	    namespace: network            # default: the type's default namespace
//	    id: eth1
//	    labels: {role: uplink}
//	    spec: {MTU: 9000}             # the spec's JSON form, in YAML
//	remove:                           # resources to remove
//	  - {type: linkspec, id: eth2}
//
// A change file may also hold resources as `resgraphctl get -o yaml`
// prints them ("---" separated documents of metadata and spec; or the
// JSON documents of `-o json`, one after the other), each one to set: its
// type, namespace, ID, labels, annotations and spec are read, the rest of
// its metadata (version, owner, phase, times, finalizers) is the stored
// resource's and is left as it is. Documents of both forms may follow one
// another. A document that is neither is a [*DocumentError].
//
// reg knows the types (and their aliases, by its definitions) and decodes
// the specs, which must be in JSON form (a type whose specs are encoded
// otherwise cannot be written in a change file). A type reg does not know,
// a spec that does not decode (or was hidden as sensitive), a spec key
// its type has no field for or that names one only by a different case
// (a *codec.UnknownFieldError: a change file is input, read strictly, by
// codec.Registry.DecodeSpecInput), a missing ID
// or a document that is neither form is an error of the invalid class
// (state.IsInvalidError) naming the entry. A plan of the change never
// prints the spec values of the types reg's definitions mark sensitive
// (rule PL4).
func ParseChange(r io.Reader, reg *codec.Registry) (Change, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Change{}, err
	}
	f, err := fileOf(data)
	if err != nil {
		return Change{}, state.NewInvalidError(nil, "plan: change file: %w", err)
	}
	c := Change{sensitive: reg.Definitions().Sensitive}
	for _, fr := range f.Set {
		res, err := fr.resource(reg)
		if err != nil {
			return Change{}, state.NewInvalidError(nil, "plan: change file: %s: %w", fr.where, err)
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

// fileOf reads the documents of a change file into one change: a
// change's entries, and each resource document as one to set.
func fileOf(data []byte) (file, error) {
	docs, err := documentsOf(data)
	if err != nil {
		return file{}, err
	}
	var f file
	for i, doc := range docs {
		kind, err := kindOf(doc, i+1)
		if err != nil {
			return file{}, err
		}
		if kind == changeDocument {
			var c file
			if err := strictly(doc, &c); err != nil {
				return file{}, err
			}
			for j := range c.Set {
				c.Set[j].where = fmt.Sprintf("set[%d]", j)
				if len(docs) > 1 {
					c.Set[j].where = fmt.Sprintf("document %d: set[%d]", i+1, j)
				}
			}
			f.Set, f.Remove = append(f.Set, c.Set...), append(f.Remove, c.Remove...)
			continue
		}
		var rd resourceDoc
		if err := strictly(doc, &rd); err != nil {
			return file{}, fmt.Errorf("document %d: %w", i+1, err)
		}
		fr, err := rd.asSet()
		if err != nil {
			return file{}, fmt.Errorf("document %d: %w", i+1, err)
		}
		fr.where = fmt.Sprintf("document %d", i+1)
		f.Set = append(f.Set, fr)
	}
	return f, nil
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
	return reg.DecodeSpecInput(md, codec.FormatJSON, spec)
}
