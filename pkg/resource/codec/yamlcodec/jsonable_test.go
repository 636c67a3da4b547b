package yamlcodec_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/resgraph/resgraph/pkg/resource/codec/yamlcodec"
)

// TestJSONable: a YAML document with keys of other types than strings, at
// any depth (in maps and in lists), encodes to JSON with string keys.
func TestJSONable(t *testing.T) {
	var v any
	require.NoError(t, yaml.Unmarshal([]byte("a: {1: x, true: [ {2: y} ]}\nb: [1, {3: z}]\n"), &v))
	_, err := json.Marshal(v)
	require.Error(t, err, "YAML's map[any]any does not encode")
	b, err := json.Marshal(yamlcodec.JSONable(v))
	require.NoError(t, err)
	assert.JSONEq(t, `{"a": {"1": "x", "true": [{"2": "y"}]}, "b": [1, {"3": "z"}]}`, string(b))
}
