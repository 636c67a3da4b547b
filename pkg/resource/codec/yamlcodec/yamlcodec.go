// Package yamlcodec writes a resource as a YAML document and reads one
// back, for people and the tools they use (a CLI's "-o yaml" and
// "apply -f"). A document has two keys:
//
//	metadata:
//	    namespace: network
//	    type: Links.net.resgraph.dev
//	    id: eth0
//	    version: 3
//	    owner: LinkController
//	    phase: running
//	    created: 2026-11-29T10:00:00.000000001Z
//	    updated: 2026-11-29T10:00:01Z
//	    labels:
//	        up: "yes"
//	    annotations: {}
//	    finalizers:
//	        - cleanup
//	spec:
//	    mtu: 9000
//
// The spec is the spec value as gopkg.in/yaml.v3 marshals it (its yaml
// tags, its MarshalYAML or MarshalText methods). Reading decodes by type:
// the metadata's type names a type registered in a codec.Registry, which
// makes the empty resource of its Go type; the spec is decoded into it in
// place. So a resource written by [Marshal] and read by [Unmarshal] is
// equal to it (resource.Equal, rule R1) with the same timestamps, for
// every spec that YAML round-trips (as JSON, a nil and an empty slice or
// map are one). Version, owner, phase, timestamps, annotations and
// finalizers may be left out when writing a document by hand: they are
// then zero (undefined version, running, no owner).
//
// Malformed input is an error of the state package's invalid class
// (state.IsInvalidError) naming what is wrong, and so is a type that is
// not registered; nothing is decoded partially.
package yamlcodec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
)

// document is the YAML shape of a resource.
type document struct {
	Metadata metadata  `yaml:"metadata"`
	Spec     yaml.Node `yaml:"spec"`
}

// metadata is the YAML shape of resource.Metadata.
type metadata struct {
	Namespace   string            `yaml:"namespace"`
	Type        string            `yaml:"type"`
	ID          string            `yaml:"id"`
	Version     uint64            `yaml:"version,omitempty"`
	Owner       string            `yaml:"owner,omitempty"`
	Phase       string            `yaml:"phase,omitempty"`
	Created     *time.Time        `yaml:"created,omitempty"`
	Updated     *time.Time        `yaml:"updated,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
	Finalizers  []string          `yaml:"finalizers,omitempty"`
}

// Value returns r as a value that yaml.Marshal writes as the document of
// r (metadata and spec): for a caller that builds a larger document.
func Value(r resource.Resource) (any, error) {
	md, err := state.ValidateResource(r)
	if err != nil {
		return nil, err
	}
	m := metadata{
		Namespace: md.Namespace(), Type: md.Type(), ID: md.ID(),
		Version: md.Version().Value(), Owner: md.Owner(), Phase: md.Phase().String(),
		Labels: md.Labels().Raw(), Annotations: md.Annotations().Raw(),
		Finalizers: append([]string(nil), *md.Finalizers()...),
	}
	if t := md.Created(); !t.IsZero() {
		m.Created = &t
	}
	if t := md.Updated(); !t.IsZero() {
		m.Updated = &t
	}
	var spec yaml.Node
	if err := encodeSpec(&spec, r.Spec()); err != nil {
		return nil, state.NewInvalidError(resource.PointerOf(md), "yaml: spec %T: %w", r.Spec(), err)
	}
	return &document{Metadata: m, Spec: spec}, nil
}

// encodeSpec encodes a spec into node, turning a panic of the spec's own
// marshaling into an error.
func encodeSpec(node *yaml.Node, spec any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("marshaling panicked: %v", p)
		}
	}()
	return node.Encode(spec)
}

// Marshal returns r as one YAML document (see the package documentation).
func Marshal(r resource.Resource) ([]byte, error) {
	v, err := Value(r)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(4)
	if err := enc.Encode(v); err != nil {
		return nil, state.NewInvalidError(nil, "yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, state.NewInvalidError(nil, "yaml: %w", err)
	}
	return buf.Bytes(), nil
}

// Unmarshal reads one resource from data, a single YAML document, as the
// Go type reg registered for its type.
func Unmarshal(reg *codec.Registry, data []byte) (resource.Resource, error) {
	rs, err := DecodeAll(reg, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if len(rs) != 1 {
		return nil, state.NewInvalidError(nil, "yaml: %d documents, expected one", len(rs))
	}
	return rs[0], nil
}

// DecodeAll reads every document of a YAML stream ("---" separated), in
// order, each as the Go type reg registered for its type. An error names
// the document (from 1); no resource is returned then.
func DecodeAll(reg *codec.Registry, in io.Reader) ([]resource.Resource, error) {
	if reg == nil {
		return nil, state.NewInvalidError(nil, "yaml: nil registry")
	}
	dec := yaml.NewDecoder(in)
	dec.KnownFields(true)
	var out []resource.Resource
	for n := 1; ; n++ {
		var doc document
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, state.NewInvalidError(nil, "yaml: document %d: %w", n, err)
		}
		r, err := doc.resource(reg)
		if err != nil {
			return nil, state.NewInvalidError(nil, "yaml: document %d: %w", n, err)
		}
		out = append(out, r)
	}
}

// resource builds the resource of the document, of the Go type reg
// registered for its type.
func (doc *document) resource(reg *codec.Registry) (resource.Resource, error) {
	m := doc.Metadata
	md := resource.NewMetadata(m.Namespace, m.Type, m.ID, resource.VersionUndefined)
	if err := resource.ValidatePointer(&md); err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	md.SetVersion(resource.NewVersion(m.Version))
	switch m.Phase {
	case "", resource.PhaseRunning.String():
	case resource.PhaseTearingDown.String():
		md.SetPhase(resource.PhaseTearingDown)
	default:
		return nil, fmt.Errorf("metadata.phase %q: neither %q nor %q", m.Phase, resource.PhaseRunning, resource.PhaseTearingDown)
	}
	md.ReplaceOwner(m.Owner)
	if m.Created != nil {
		md.SetCreated(*m.Created)
	}
	if m.Updated != nil {
		md.SetUpdated(*m.Updated)
	}
	for k, v := range m.Labels {
		md.Labels().Set(k, v)
	}
	for k, v := range m.Annotations {
		md.Annotations().Set(k, v)
	}
	for _, f := range m.Finalizers {
		md.Finalizers().Add(f)
	}
	r, spec, err := reg.New(md)
	if err != nil {
		return nil, err
	}
	if doc.Spec.Kind != 0 {
		if err := doc.Spec.Decode(spec); err != nil {
			return nil, fmt.Errorf("spec of %s: %w", resource.PointerString(&md), err)
		}
	}
	return r, nil
}
