// Package printer prints resources of any type for resgraphctl: a table
// with the type's printed columns (its definition's), or documents in
// YAML or JSON (metadata and spec). A sensitive type's spec — and its
// columns, which read the spec — is printed only when the caller says so
// (Options.ShowSensitive): otherwise [Hidden] stands in its place.
package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
)

// Metadata is a resource's metadata in a document: the YAML shape of
// package yamlcodec, so that documents resgraphctl prints are documents
// resgraphctl and yamlcodec read.
type Metadata struct {
	Namespace   string            `yaml:"namespace" json:"namespace"`
	Type        string            `yaml:"type" json:"type"`
	ID          string            `yaml:"id" json:"id"`
	Version     uint64            `yaml:"version,omitempty" json:"version,omitempty"`
	Owner       string            `yaml:"owner,omitempty" json:"owner,omitempty"`
	Phase       string            `yaml:"phase,omitempty" json:"phase,omitempty"`
	Created     *time.Time        `yaml:"created,omitempty" json:"created,omitempty"`
	Updated     *time.Time        `yaml:"updated,omitempty" json:"updated,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
	Finalizers  []string          `yaml:"finalizers,omitempty" json:"finalizers,omitempty"`
}

// MetadataOf returns md as a document's metadata.
func MetadataOf(md *resource.Metadata) Metadata {
	m := Metadata{
		Namespace: md.Namespace(), Type: md.Type(), ID: md.ID(), Version: md.Version().Value(),
		Owner: md.Owner(), Phase: md.Phase().String(), Finalizers: append([]string(nil), *md.Finalizers()...),
	}
	if md.Labels().Len() > 0 {
		m.Labels = md.Labels().Raw()
	}
	if md.Annotations().Len() > 0 {
		m.Annotations = md.Annotations().Raw()
	}
	if t := md.Created(); !t.IsZero() {
		m.Created = &t
	}
	if t := md.Updated(); !t.IsZero() {
		m.Updated = &t
	}
	return m
}

// Hidden is what stands for a sensitive spec (and its columns) unless
// the caller asked for it; %s is the type.
const Hidden = "<hidden: %s is sensitive; --show-sensitive prints it>"

// HiddenSpec reports whether s is what stands for a hidden sensitive spec.
func HiddenSpec(s string) bool {
	var typ string
	_, err := fmt.Sscanf(s, "<hidden: %s is sensitive;", &typ)
	return err == nil
}

// SpecJSON returns r's spec as JSON: its own JSON form for resources of
// types resgraphctl does not know (remote.Unstructured), encoding/json's
// otherwise.
func SpecJSON(r resource.Resource) (json.RawMessage, error) {
	if u, ok := r.(interface{ SpecJSON() json.RawMessage }); ok {
		return u.SpecJSON(), nil
	}
	return json.Marshal(r.Spec())
}

// Spec returns r's spec as generic values (maps, slices, strings,
// json.Number, booleans), as definition columns read it.
func Spec(r resource.Resource) (any, error) {
	b, err := SpecJSON(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: the spec is not JSON: %w", resource.PointerString(r.Metadata()), err)
	}
	return v, nil
}

// hidden reports whether r's spec must not be printed.
func hidden(def definition.Definition, show bool) bool { return def.Sensitive && !show }

// SpecYAML returns r's spec as a YAML node (block style, mapping keys in
// the spec's order), or the Hidden text for a sensitive spec not shown.
func SpecYAML(r resource.Resource, def definition.Definition, show bool) (*yaml.Node, error) {
	if hidden(def, show) {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprintf(Hidden, def.Type)}, nil
	}
	b, err := SpecJSON(r)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: the spec is not JSON: %w", resource.PointerString(r.Metadata()), err)
	}
	if len(doc.Content) != 1 {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil
	}
	n := doc.Content[0]
	blockStyle(n)
	return n, nil
}

// blockStyle clears the flow and quoting styles JSON's syntax gave n and
// its children: the encoder then writes block YAML, quoting a string only
// where YAML would read it as something else.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// yamlDocument is a resource as a YAML document.
type yamlDocument struct {
	Event    string     `yaml:"event,omitempty"`
	Metadata Metadata   `yaml:"metadata"`
	Spec     *yaml.Node `yaml:"spec"`
}

// jsonDocument is a resource as a JSON document.
type jsonDocument struct {
	Event    string          `json:"event,omitempty"`
	Metadata Metadata        `json:"metadata"`
	Spec     json.RawMessage `json:"spec"`
}

// YAML returns r as one YAML document (without the "---" separator); a
// watch event's document starts with its event ("created", ...).
func YAML(r resource.Resource, def definition.Definition, show bool, event string) ([]byte, error) {
	spec, err := SpecYAML(r, def, show)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(4)
	if err := enc.Encode(&yamlDocument{Event: event, Metadata: MetadataOf(r.Metadata()), Spec: spec}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// JSON returns r as one indented JSON document followed by a newline.
func JSON(r resource.Resource, def definition.Definition, show bool, event string) ([]byte, error) {
	var spec json.RawMessage
	if hidden(def, show) {
		spec, _ = json.Marshal(fmt.Sprintf(Hidden, def.Type))
	} else {
		b, err := SpecJSON(r)
		if err != nil {
			return nil, err
		}
		spec = b
	}
	out, err := json.MarshalIndent(&jsonDocument{Event: event, Metadata: MetadataOf(r.Metadata()), Spec: spec}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resource.PointerString(r.Metadata()), err)
	}
	return append(out, '\n'), nil
}
