package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/resgraph/resgraph/internal/netcut"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestCT1_SeveralSelectorsSelectTheUnion: the terms of one -l all hold;
// several -l select what any selects (rule S15), in get and in a watch.
func TestCT1_SeveralSelectorsSelectTheUnion(t *testing.T) {
	d := serveTestDaemon(t)
	d.create(t, newItem("a", 1, "color", "red", "rank", "10"))
	d.create(t, newItem("b", 2, "color", "blue", "rank", "9"))
	d.create(t, newItem("c", 3, "color", "red", "rank", "8"))
	d.create(t, newItem("d", 4))
	ids := func(args ...string) []string {
		out, errOut, code := ctl(t, d.socket, append([]string{"get", "items", "-o", "json"}, args...)...)
		require.Zero(t, code, errOut)
		dec := json.NewDecoder(strings.NewReader(out))
		var got []string
		for dec.More() {
			var j struct{ Metadata struct{ ID string } }
			require.NoError(t, dec.Decode(&j))
			got = append(got, j.Metadata.ID)
		}
		return got
	}
	assert.Equal(t, []string{"a", "c"}, ids("-l", "color=red"))
	assert.Equal(t, []string{"a"}, ids("-l", "color=red,rank>=9"), "one selector: every term")
	assert.Equal(t, []string{"a", "b"}, ids("-l", "color=red,rank>=9", "-l", "color=blue"), "two selectors: the union")
	assert.Equal(t, []string{"b", "d"}, ids("-l", "color notin (red)"))
	assert.Equal(t, []string{"d"}, ids("-l", "!color"))

	w := start(t, nil, "resgraphctl", "--endpoint", d.socket, "get", "items", "-l", "color=blue", "-l", "rank<9", "-w")
	w.stdout.waitFor(t, 0, "b", fields("existing", "b"))
	w.stdout.waitFor(t, 0, "c", fields("existing", "c"))
	d.create(t, newItem("e", 5, "color", "blue"))
	d.create(t, newItem("f", 6, "color", "green"))
	d.create(t, newItem("g", 7, "rank", "1"))
	w.stdout.waitFor(t, 0, "g", fields("created", "g"))
	w.stop(t)
	assert.Contains(t, w.stdout.text(), "created    shop        e ")
	assert.NotContains(t, w.stdout.text(), " f ")
}

// TestCT3_SensitiveSpecsAreNeverPrintedUnasked: a sensitive type's spec
// and columns are hidden in every output unless --show-sensitive; the
// placeholder is not written back.
func TestCT3_SensitiveSpecsAreNeverPrintedUnasked(t *testing.T) {
	d := serveTestDaemon(t)
	d.create(t, typed.NewDefault[secretSpec, secretDef]("db", secretSpec{Holder: "alice", Key: "hunter2"}))
	w := start(t, nil, "resgraphctl", "--endpoint", d.socket, "get", "secrets", "-w", "-o", "yaml")
	w.stdout.waitFor(t, 0, "the secret", func(l string) bool { return strings.Contains(l, "<hidden: Secrets.test.resgraph.dev is sensitive") })
	for _, args := range [][]string{
		{"get", "secrets"}, {"get", "secrets", "-o", "wide"}, {"get", "secret", "db", "-o", "yaml"},
		{"get", "secret", "db", "-o", "json"}, {"describe", "secret", "db"},
	} {
		out, errOut, code := ctl(t, d.socket, args...)
		require.Zero(t, code, "%v: %s", args, errOut)
		assert.NotContains(t, out, "hunter2", args)
		assert.NotContains(t, out, "alice", args)
		assert.Contains(t, out, "hidden", args)
		out, _, code = ctl(t, d.socket, append(args, "--show-sensitive")...)
		require.Zero(t, code, args)
		assert.Contains(t, out, "alice", args)
		if args[1] != "secrets" { // the table prints the columns, not the key
			assert.Contains(t, out, "hunter2", args)
		}
	}
	w.stop(t)
	assert.NotContains(t, w.stdout.text(), "hunter2")

	hidden, _, _ := ctl(t, d.socket, "get", "secret", "db", "-o", "yaml")
	_, errOut, code := ctlIn(t, d.socket, hidden, "apply", "-f", "-")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "placeholder of a hidden sensitive spec")
	r, err := d.st.Get(context.Background(), resource.NewPointer("vault", "Secrets.test.resgraph.dev", "db"))
	require.NoError(t, err)
	assert.Equal(t, "hunter2", r.Spec().(secretSpec).Key, "nothing written")
}

// TestCT4_WatchResumesAcrossABrokenConnection: a watch through a network
// that breaks (a proxy cut and held while the resource changes) says so,
// resumes when it is back, and prints the changes after the break in
// order, none twice.
func TestCT4_WatchResumesAcrossABrokenConnection(t *testing.T) {
	d := serveTestDaemon(t)
	d.create(t, newItem("a", 0))
	p := netcut.New(t, d.tcp)
	w := start(t, nil, "resgraphctl", "--endpoint", p.Addr(), "get", "item", "a", "-w")
	w.stdout.waitFor(t, 0, "the item", fields("existing", "a", "0"))
	set := func(size int) {
		t.Helper()
		_, err := d.st.UpdateWithConflicts(context.Background(), resource.NewPointer("shop", "Items.test.resgraph.dev", "a"), func(r resource.Resource) error {
			r.(*item).TypedSpec().Size = size
			return nil
		})
		require.NoError(t, err)
	}
	set(1)
	w.stdout.waitFor(t, 0, "size 1", fields("updated", "a", "1"))
	p.Cut()
	w.stderr.waitFor(t, 0, "the lost connection", func(l string) bool { return strings.Contains(l, "lost the connection") })
	for size := 2; size <= 20; size++ {
		set(size)
	}
	p.Restore()
	w.stderr.waitFor(t, 0, "the connection back", func(l string) bool { return strings.Contains(l, "connected to "+p.Addr()+" again") })
	set(21)
	last := w.stdout.waitFor(t, 0, "size 21", fields("updated", "a", "21"))
	w.stop(t)

	lines := strings.Split(w.stdout.text(), "\n")[:last+1]
	prev := -1
	for _, l := range lines[1:] { // the header first
		f := strings.Fields(l)
		var version int
		_, err := fmt.Sscan(f[3], &version)
		require.NoError(t, err, l)
		assert.Greater(t, version, prev, "in order, none twice: %q", l)
		prev = version
	}
	assert.NotContains(t, w.stderr.text(), "cannot resume")
}

// TestCT7_DeleteNamesTheFinalizersItWaitedFor: a finalizer nobody
// releases keeps the resource; delete waits --timeout, names it, exits 1,
// and leaves the resource tearing down; once released, delete again
// destroys it.
func TestCT7_DeleteNamesTheFinalizersItWaitedFor(t *testing.T) {
	d := serveTestDaemon(t)
	d.create(t, newItem("held", 1))
	ptr := resource.NewPointer("shop", "Items.test.resgraph.dev", "held")
	require.NoError(t, d.st.AddFinalizer(context.Background(), ptr, "HoldingController"))

	out, errOut, code := ctl(t, d.socket, "delete", "item", "held", "--timeout", "300ms")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "item/held tearing down: waiting for its finalizers HoldingController")
	assert.Contains(t, errOut, "item/held: still tearing down after --timeout 300ms: finalizers HoldingController remain")
	r, err := d.st.Get(context.Background(), ptr)
	require.NoError(t, err)
	assert.Equal(t, resource.PhaseTearingDown, r.Metadata().Phase())

	w := start(t, nil, "resgraphctl", "--endpoint", d.socket, "delete", "item", "held")
	w.stdout.waitFor(t, 0, "the wait", func(l string) bool { return strings.Contains(l, "waiting for its finalizers HoldingController") })
	require.NoError(t, d.st.RemoveFinalizer(context.Background(), ptr, "HoldingController"))
	w.stdout.waitFor(t, 0, "the destroy", func(l string) bool { return strings.HasPrefix(l, "item/held destroyed") })
	assert.Zero(t, w.wait(t))
	_, err = d.st.Get(context.Background(), ptr)
	assert.True(t, state.IsNotFoundError(err))
}

// TestCT5_BadInputIsOnePlainLine: an unknown type, a bad selector, a
// malformed file, an unreachable endpoint, a wrong command line: one
// plain line naming the problem (and where the usage is, for a wrong
// command line), a non-zero exit, nothing written.
func TestCT5_BadInputIsOnePlainLine(t *testing.T) {
	d := serveTestDaemon(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("metadata:\n  type: item\n  id: x\nspec: {size: [\n"), 0o600))
	unknownField := filepath.Join(t.TempDir(), "unknown.yaml")
	require.NoError(t, os.WriteFile(unknownField, []byte("metadata:\n  type: item\n  id: x\n  colour: red\n"), 0o600))
	for _, c := range []struct {
		endpoint string
		args     []string
		code     int
		want     string
	}{
		{d.socket, []string{"get", "widgets"}, 1, `unknown type "widgets": the daemon knows item, secret`},
		{d.socket, []string{"get", "items", "-l", "size in (1"}, 2, `label selector "size in (1": a '(' is not closed`},
		{d.socket, []string{"get", "items", "-l", "a=b,,c"}, 2, `label selector "a=b,,c": empty term`},
		{d.socket, []string{"apply", "-f", bad}, 1, "bad.yaml: document 1: not a resource document: yaml: line 4"},
		{d.socket, []string{"apply", "-f", unknownField}, 1, "unknown.yaml: document 1: not a resource document: line 4: field colour not found in type manifest.metadata"},
		{d.socket, []string{"create", "-f", filepath.Join(t.TempDir(), "missing.yaml")}, 1, "missing.yaml: no such file or directory"},
		{d.socket, []string{"get", "item", "nope"}, 1, "not found"},
		{d.socket, []string{"get", "items", "-o", "xml"}, 2, `-o "xml": want one of table, wide, yaml, json`},
		{d.socket, []string{"get"}, 2, "get: want TYPE [ID], got 0 argument(s)"},
		{d.socket, []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{d.socket, []string{"delete", "item", "--timeout", "-1s", "x"}, 2, "--timeout must be positive"},
		{filepath.Join(t.TempDir(), "none.sock"), []string{"get", "items"}, 1, "cannot reach the daemon at "},
		{"127.0.0.1:1", []string{"get", "items"}, 1, "cannot reach the daemon at 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused"},
		{"no-port", []string{"get", "items"}, 2, `--endpoint "no-port": want a unix socket path (with a /) or HOST:PORT`},
		{d.socket, []string{"health"}, 1, "does not serve this"},
	} {
		out, errOut, code := ctl(t, c.endpoint, c.args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errOut)
		assert.Empty(t, out, c.args)
		first, _, _ := strings.Cut(errOut, "\n")
		assert.True(t, strings.HasPrefix(first, "resgraphctl: "), "%v: %q", c.args, errOut)
		assert.Contains(t, first, c.want, c.args)
		assert.NotContains(t, errOut, "goroutine", c.args)
		assert.NotContains(t, errOut, "rpc error: code", c.args)
		if c.code == 2 {
			assert.Contains(t, errOut, "--help' for usage", c.args)
		}
	}
	l, err := d.st.List(context.Background(), resource.NewKind("shop", "Items.test.resgraph.dev"))
	require.NoError(t, err)
	assert.Empty(t, l.Items, "nothing written")
}

// TestCT14_ASpecKeyTheTypeHasNotIsRefused: create and apply of a spec with
// a key the daemon's spec type has no field for, or one matching a field
// only by case, are refused in one line naming the key's path and the
// type, and nothing is written; the exact key is accepted.
func TestCT14_ASpecKeyTheTypeHasNotIsRefused(t *testing.T) {
	d := serveTestDaemon(t)
	for _, c := range []struct{ spec, want string }{
		{"{size: 3, Bogus: 1}", `spec.Bogus: main.itemSpec has no field "Bogus"`},
		{"{Size: 3}", `spec.Size: main.itemSpec has no field "Size": its field is "size"`},
	} {
		for _, verb := range []string{"create", "apply"} {
			doc := "metadata: {type: item, id: x}\nspec: " + c.spec + "\n"
			out, errOut, code := ctlIn(t, d.socket, doc, verb, "-f", "-")
			assert.Equal(t, 1, code, "%s %s: %s", verb, c.spec, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %s", errOut)
			assert.Contains(t, errOut, c.want, verb)
			assert.NotContains(t, errOut, "rpc error: code", verb)
		}
	}
	l, err := d.st.List(context.Background(), resource.NewKind("shop", "Items.test.resgraph.dev"))
	require.NoError(t, err)
	assert.Empty(t, l.Items, "nothing written")

	out, errOut, code := ctlIn(t, d.socket, "metadata: {type: item, id: x}\nspec: {size: 3}\n", "create", "-f", "-")
	require.Zero(t, code, errOut)
	assert.Equal(t, "item/x created\n", out)
	r, err := d.st.Get(context.Background(), resource.NewPointer("shop", "Items.test.resgraph.dev", "x"))
	require.NoError(t, err)
	assert.Equal(t, 3, r.(*item).TypedSpec().Size)
}

// TestCT2_TypesTakesTheOutputFormatsOfGet: types prints its table, -o
// wide adds the encoding and the columns' paths, -o json and -o yaml
// print every definition as a list; another -o is a usage error.
func TestCT2_TypesTakesTheOutputFormatsOfGet(t *testing.T) {
	d := serveTestDaemon(t)
	want := map[string]any{"type": "Items.test.resgraph.dev", "aliases": []any{"item", "items"}, "defaultNamespace": "shop",
		"encoding": "json", "columns": []any{map[string]any{"name": "Size", "path": ".size"}}, "sensitive": false}
	out, errOut, code := ctl(t, d.socket, "types", "-o", "json")
	require.Zero(t, code, errOut)
	var docs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &docs), out)
	assert.Contains(t, docs, want)

	out, errOut, code = ctl(t, d.socket, "types", "-o", "yaml")
	require.Zero(t, code, errOut)
	docs = nil
	require.NoError(t, yaml.Unmarshal([]byte(out), &docs), out)
	assert.Contains(t, docs, want)

	out, errOut, code = ctl(t, d.socket, "types", "-o", "wide")
	require.Zero(t, code, errOut)
	assert.Equal(t, []string{"TYPE", "ALIASES", "NAMESPACE", "COLUMNS", "SENSITIVE", "ENCODING"}, strings.Fields(strings.SplitN(out, "\n", 2)[0]))
	assert.Contains(t, out, "Size=.size")

	_, errOut, code = ctl(t, d.socket, "types", "-o", "xml")
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, `-o "xml": want one of table, wide, yaml, json`)
}
