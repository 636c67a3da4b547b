package printer_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/printer"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

func unstructured(id, spec string) *remote.Unstructured {
	md := resource.NewMetadata("ns", "Things.test", id, resource.NewVersion(3))
	md.Labels().Set("app", "web")
	return remote.NewUnstructured(md, json.RawMessage(spec))
}

func TestYAML_KeepsWhatJSONMeant(t *testing.T) {
	r := unstructured("a", `{"Name":"true","Port":8080,"Tags":["x","007"],"Nested":{"Empty":{}}}`)
	out, err := printer.YAML(r, definition.Definition{Type: "Things.test"}, false, "")
	require.NoError(t, err)
	s := string(out)
	assert.Contains(t, s, "    Name: \"true\"\n", "a string that YAML would read as a boolean stays a string")
	assert.Contains(t, s, "    Port: 8080\n")
	assert.Contains(t, s, "        - \"007\"\n")
	assert.Contains(t, s, "    Nested:\n        Empty: {}\n")
	assert.Less(t, strings.Index(s, "Name"), strings.Index(s, "Port"), "the spec's order")
}

func TestCT3_SensitiveSpecsAreHidden(t *testing.T) {
	r := unstructured("a", `{"holder":"alice","key":"hunter2"}`)
	def := definition.Definition{Type: "Things.test", Sensitive: true, Columns: []definition.Column{{Name: "Holder", Path: ".holder"}}}
	var buf bytes.Buffer
	for _, f := range printer.Formats {
		p := printer.New(&buf, printer.Options{Format: printer.Format(f), Definition: def})
		require.NoError(t, p.Print([]printer.Item{{Resource: r}}, false))
	}
	assert.NotContains(t, buf.String(), "hunter2")
	assert.NotContains(t, buf.String(), "alice")
	assert.True(t, printer.HiddenSpec("<hidden: Things.test is sensitive; --show-sensitive prints it>"))

	buf.Reset()
	p := printer.New(&buf, printer.Options{Format: printer.Table, Definition: def, ShowSensitive: true})
	require.NoError(t, p.Print([]printer.Item{{Resource: r}}, false))
	assert.Contains(t, buf.String(), "alice")
}

func TestTable_ColumnsAndAlignment(t *testing.T) {
	def := definition.Definition{Type: "Things.test", Columns: []definition.Column{{Name: "Tags", Path: ".Tags"}, {Name: "Port", Path: ".Port"}}}
	var buf bytes.Buffer
	p := printer.New(&buf, printer.Options{Format: printer.Table, Definition: def, Now: time.Now()})
	require.NoError(t, p.Print([]printer.Item{{Resource: unstructured("a", `{"Tags":["x","y"],"Port":1}`)}, {Resource: unstructured("bb", `{}`)}}, false))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	assert.Equal(t, []string{"NAMESPACE", "ID", "VERSION", "PHASE", "TAGS", "PORT", "AGE"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"ns", "a", "3", "running", "x,y", "1", "-"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"ns", "bb", "3", "running", "-", "-", "-"}, strings.Fields(lines[2]))
	assert.Equal(t, strings.Index(lines[0], "TAGS"), strings.Index(lines[1], "x,y"), "aligned")
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 90 * time.Second: "90s", 5 * time.Minute: "5m", 3 * time.Hour: "3h", 72 * time.Hour: "3d",
	} {
		assert.Equal(t, want, printer.Age(d))
	}
}
