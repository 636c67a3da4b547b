package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// DocumentError is a document of a change file that is neither a change
// (a mapping of set and remove) nor a resource as `resgraphctl get -o
// yaml` or `-o json` prints it (a mapping of metadata and spec).
// ParseChange returns it wrapped in an error of the invalid class.
type DocumentError struct {
	// Index is the document's place in the file, from 1.
	Index int
	// Keys are its top-level keys, sorted (none when it is not a
	// mapping).
	Keys []string
}

func (e *DocumentError) Error() string {
	what := "not a mapping"
	if len(e.Keys) > 0 {
		what = "its keys are " + strings.Join(e.Keys, ", ")
	}
	return fmt.Sprintf("document %d is neither a change (set, remove) nor a resource as resgraphctl get prints it (metadata, spec): %s", e.Index, what)
}

// documentsOf splits a change file into its documents: YAML documents
// ("---" separated), or JSON values one after the other (as `resgraphctl
// get -o json` prints several resources). Empty documents are left out.
func documentsOf(data []byte) ([][]byte, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return jsonDocuments(t)
	}
	var docs [][]byte
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(n.Content) == 0 || n.Content[0].Tag == "!!null" {
			continue
		}
		b, err := yaml.Marshal(&n)
		if err != nil {
			return nil, err
		}
		docs = append(docs, b)
	}
}

// jsonDocuments splits JSON values one after the other.
func jsonDocuments(data []byte) ([][]byte, error) {
	var docs [][]byte
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, v)
	}
}

// documentKind is what a change file's document is.
type documentKind uint8

const (
	changeDocument documentKind = iota + 1
	resourceDocument
)

// kindOf tells a change (set, remove) from a resource (metadata, spec),
// or returns a *DocumentError for the document doc of index i (from 1).
func kindOf(doc []byte, i int) (documentKind, error) {
	var top map[string]any
	if err := yaml.Unmarshal(doc, &top); err != nil || len(top) == 0 {
		return 0, &DocumentError{Index: i}
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	switch {
	case slices.Contains(keys, "metadata"):
		return resourceDocument, nil
	case !slices.ContainsFunc(keys, func(k string) bool { return k != "set" && k != "remove" }):
		return changeDocument, nil
	}
	return 0, &DocumentError{Index: i, Keys: keys}
}

// resourceDoc is a resource as resgraphctl get prints it: the metadata
// of package yamlcodec's shape and the spec. A plan sets the spec,
// labels and annotations; the rest of the metadata is the stored
// resource's and is read only to be known.
type resourceDoc struct {
	Metadata struct {
		filePointer `yaml:",inline"`
		Version     uint64            `yaml:"version"`
		Owner       string            `yaml:"owner"`
		Phase       string            `yaml:"phase"`
		Created     any               `yaml:"created"`
		Updated     any               `yaml:"updated"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
		Finalizers  []string          `yaml:"finalizers"`
	} `yaml:"metadata"`
	Spec any `yaml:"spec"`
}

// hiddenSpec is how resgraphctl get prints a sensitive spec it hides.
const hiddenSpec = "<hidden: "

// asSet returns the document's resource as a change file's set entry.
func (d resourceDoc) asSet() (fileResource, error) {
	if s, ok := d.Spec.(string); ok && strings.HasPrefix(s, hiddenSpec) {
		return fileResource{}, fmt.Errorf("%s(%s): the spec is hidden (the type is sensitive): get it with --show-sensitive to change it",
			d.Metadata.Type, d.Metadata.ID)
	}
	return fileResource{filePointer: d.Metadata.filePointer, Labels: d.Metadata.Labels,
		Annotations: d.Metadata.Annotations, Spec: d.Spec}, nil
}

// strictly decodes doc into v, refusing keys v does not have.
func strictly(doc []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
