// Package manifest reads the files of resgraphctl's create and apply -f:
// a stream of YAML documents ("---" separated; JSON documents are YAML
// too), each a resource as resgraphctl get -o yaml prints it:
//
//	metadata:
//	    type: linkspecs          # the type or one of its aliases
//	    id: eth1
//	    namespace: config        # optional: the type's default namespace
//	    labels: {role: uplink}   # optional
//	    annotations: {}          # optional
//	spec:
//	    MTU: 9000
//
// The other metadata fields a printed document has (version, owner, phase,
// created, updated, finalizers) are the daemon's: they are accepted and
// ignored, except an owner, which is refused — a resource with an owner
// is its controller's to write, and resgraphctl writes as an outside
// writer. A bad document is an error naming the file, the document (from
// 1) and the problem: Read stops at the first, ReadDocs returns each.
package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/printer"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec/yamlcodec"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// document is the shape of one document.
type document struct {
	Metadata *metadata `yaml:"metadata"`
	Spec     yaml.Node `yaml:"spec"`
}

type metadata struct {
	Namespace   string            `yaml:"namespace"`
	Type        string            `yaml:"type"`
	ID          string            `yaml:"id"`
	Version     uint64            `yaml:"version"`
	Owner       string            `yaml:"owner"`
	Phase       string            `yaml:"phase"`
	Created     *time.Time        `yaml:"created"`
	Updated     *time.Time        `yaml:"updated"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
	Finalizers  []string          `yaml:"finalizers"`
}

// Error is a document that cannot be read.
type Error struct {
	File     string
	Document int
	Err      error
}

func (e *Error) Error() string {
	if e.Document == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s: document %d: %v", e.File, e.Document, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Doc is one document of a file: where it is, and its resource (nil when
// the document cannot be read: Err says why).
type Doc struct {
	// File is the file's name, as given to ReadDocs.
	File string
	// Index is the document's place in the file, from 1.
	Index int
	// R is the document's resource; nil when Err is set.
	R *remote.Unstructured
	// Err is why the document cannot be read (an *Error naming the file
	// and the document), or nil.
	Err error
}

// Read reads every document of in (the file name, for errors), resolving
// their types with defs: the first document that cannot be read is the
// error. An empty stream is an error.
func Read(in io.Reader, name string, defs *definition.Registry) ([]*remote.Unstructured, error) {
	docs, err := ReadDocs(in, name, defs)
	if err != nil {
		return nil, err
	}
	return Resources(docs)
}

// Resources returns the resources of docs, or the error of the first
// that was not read.
func Resources(docs []Doc) ([]*remote.Unstructured, error) {
	out := make([]*remote.Unstructured, 0, len(docs))
	for _, d := range docs {
		if d.Err != nil {
			return nil, d.Err
		}
		out = append(out, d.R)
	}
	return out, nil
}

// ReadDocs reads every document of in (the file name, for errors),
// resolving their types with defs, and returns each, read or not (Err): a
// document that is YAML but not a resource, or names a type defs does not
// know, does not stop the others. A document that is not YAML ends the
// file there (the documents after it cannot be told apart): it is the
// last one returned. An empty stream is an error.
func ReadDocs(in io.Reader, name string, defs *definition.Registry) ([]Doc, error) {
	dec := yaml.NewDecoder(in)
	dec.KnownFields(true)
	var out []Doc
	for n := 1; ; n++ {
		var doc document
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			out = append(out, Doc{File: name, Index: n, Err: &Error{File: name, Document: n, Err: fmt.Errorf("not a resource document: %w", oneLine(err))}})
			var te *yaml.TypeError
			if !errors.As(err, &te) {
				break // not YAML: the decoder cannot go on
			}
			continue
		}
		u, err := doc.resource(defs)
		if err != nil {
			out = append(out, Doc{File: name, Index: n, Err: &Error{File: name, Document: n, Err: err}})
			continue
		}
		out = append(out, Doc{File: name, Index: n, R: u})
	}
	if len(out) == 0 {
		return nil, &Error{File: name, Err: errors.New("no resource in it (want YAML documents with metadata and spec)")}
	}
	return out, nil
}

// oneLine returns yaml's errors of several lines ("yaml: unmarshal
// errors:\n  line 4: ...") as one line.
func oneLine(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return errors.New(strings.Join(te.Errors, "; "))
	}
	return err
}

func (doc *document) resource(defs *definition.Registry) (*remote.Unstructured, error) {
	m := doc.Metadata
	switch {
	case m == nil:
		return nil, errors.New("no metadata (want metadata.type and metadata.id)")
	case m.Type == "":
		return nil, errors.New("metadata.type is missing")
	case m.ID == "":
		return nil, errors.New("metadata.id is missing")
	case m.Owner != "":
		return nil, fmt.Errorf("metadata.owner is %q: a resource with an owner is its controller's to write; resgraphctl writes only resources without one", m.Owner)
	}
	def, err := defs.Resolve(m.Type)
	if err != nil {
		return nil, fmt.Errorf("metadata.type: %w", err)
	}
	ns := m.Namespace
	if ns == "" {
		ns = def.DefaultNamespace
	}
	if ns == "" {
		return nil, fmt.Errorf("metadata.namespace is missing, and %s has no default namespace", def.Type)
	}
	md := resource.NewMetadata(ns, def.Type, m.ID, resource.VersionUndefined)
	for k, v := range m.Labels {
		md.Labels().Set(k, v)
	}
	for k, v := range m.Annotations {
		md.Annotations().Set(k, v)
	}
	spec, err := specJSON(&doc.Spec)
	if err != nil {
		return nil, err
	}
	return remote.NewUnstructured(md, spec), nil
}

// specJSON returns the spec node as JSON; a missing spec is an empty
// object.
func specJSON(n *yaml.Node) (json.RawMessage, error) {
	if n.Kind == 0 {
		return json.RawMessage("{}"), nil
	}
	if n.Kind == yaml.ScalarNode && printer.HiddenSpec(n.Value) {
		return nil, errors.New("spec is the placeholder of a hidden sensitive spec: get the resource with --show-sensitive to edit it")
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	b, err := json.Marshal(yamlcodec.JSONable(v))
	if err != nil {
		return nil, fmt.Errorf("spec (line %d): %w", n.Line, err)
	}
	return b, nil
}
