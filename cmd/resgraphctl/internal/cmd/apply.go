package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/printer"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// applyAttempts bounds apply's retries of a resource that others keep
// changing between its read and its write.
const applyAttempts = 10

func newApply(a *app) *cobra.Command {
	var files []string
	c := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or update the resources of a file",
		Long: `Make each resource of the files as the file says: create it if it does not
exist, otherwise write the file's spec, labels and annotations over it
(the whole spec: a field the file leaves out becomes its zero value), or
leave it unchanged when they are equal already. The file's other metadata
(version, phase, finalizers, times) is the daemon's and ignored; a
resource with an owner is its controller's, and refused. A file is
applied whole or not at all: every document is read, then checked by the
daemon as its write would be (a dry run: the type, the spec's fields,
the access rules, a controller's resource), and nothing is written when
one is refused; each refused document is named, with why. The files are
YAML or JSON documents, as create reads them.`,
		Example: `  resgraphctl get linkspec eth0 -o yaml > eth0.yaml   # edit it, then
  resgraphctl apply -f eth0.yaml`,
		GroupID: groupResources,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.write(cmd.Context(), files, a.applyOne)
		},
	}
	c.Flags().StringArrayVarP(&files, "filename", "f", nil, "a `FILE` of resources (- for the standard input); repeat for more")
	return c
}

// applyOne creates r in st, or updates the stored resource to r's spec,
// labels and annotations, retrying when another writer changed it
// meanwhile.
func (a *app) applyOne(ctx context.Context, st state.State, r *remote.Unstructured) (string, error) {
	ptr := pointerOf(r)
	for attempt := 1; ; attempt++ {
		cur, err := st.Get(ctx, ptr)
		if state.IsNotFoundError(err) {
			err = st.Create(ctx, r)
			if err == nil {
				return "created", nil
			}
		} else if err == nil {
			if same(cur, r) {
				return "unchanged", nil
			}
			if err = st.Update(ctx, updated(cur, r)); err == nil {
				return "configured", nil
			}
		}
		if !versionConflict(err) || attempt == applyAttempts {
			return "", err
		}
	}
}

// versionConflict reports whether err is a conflict that a new read
// resolves: the resource changed (or appeared) since it was read.
func versionConflict(err error) bool {
	return state.IsConflictError(err) && !state.IsOwnerConflictError(err) &&
		!state.IsPhaseConflictError(err) && !state.IsPendingFinalizersError(err)
}

// updated returns cur with want's spec, labels and annotations (cur's
// version, phase, owner and finalizers kept).
func updated(cur resource.Resource, want *remote.Unstructured) *remote.Unstructured {
	md := cur.Metadata().Copy()
	replace(md.Labels().Raw(), want.Metadata().Labels().Raw(), md.Labels().Set, md.Labels().Delete)
	replace(md.Annotations().Raw(), want.Metadata().Annotations().Raw(), md.Annotations().Set, md.Annotations().Delete)
	return remote.NewUnstructured(md, want.SpecJSON())
}

func replace(have, want map[string]string, set func(k, v string), del func(k string)) {
	for k := range have {
		if _, ok := want[k]; !ok {
			del(k)
		}
	}
	for k, v := range want {
		set(k, v)
	}
}

// same reports whether the stored resource already has want's labels,
// annotations and spec. Specs compare as JSON values, their keys ignoring
// case (the daemon reads JSON keys so), a field the file leaves out
// comparing equal to the stored field's zero value (the file writes the
// zero value there).
func same(cur resource.Resource, want *remote.Unstructured) bool {
	if !cur.Metadata().Labels().Equal(*want.Metadata().Labels()) || !cur.Metadata().Annotations().Equal(*want.Metadata().Annotations()) {
		return false
	}
	have, err := printer.SpecJSON(cur)
	if err != nil {
		return false
	}
	return sameJSON(foldKeys(decode(want.SpecJSON())), foldKeys(decode(have)))
}

// sameJSON reports whether the file's value w writes the stored value h.
func sameJSON(w, h any) bool {
	wm, ok1 := w.(map[string]any)
	hm, ok2 := h.(map[string]any)
	if !ok1 || !ok2 {
		return reflect.DeepEqual(w, h)
	}
	for k, v := range wm {
		if _, ok := hm[k]; !ok {
			return false
		}
		if !sameJSON(v, hm[k]) {
			return false
		}
	}
	for k, v := range hm {
		if _, ok := wm[k]; !ok && !zero(v) {
			return false
		}
	}
	return true
}

// zero reports whether v is a JSON zero value: null, "", 0, false, an
// empty list or object.
func zero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !zero(e) {
				return false
			}
		}
		return true
	}
	return false
}

func decode(b []byte) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// foldKeys lower-cases the keys of every object in v.
func foldKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[strings.ToLower(k)] = foldKeys(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = foldKeys(e)
		}
	}
	return v
}
