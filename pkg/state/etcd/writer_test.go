package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// outcome is what a write leaves: a value, or no resource.
type outcome struct {
	exists bool
	value  int
}

func (o outcome) String() string {
	if !o.exists {
		return "absent"
	}
	return fmt.Sprint(o.value)
}

// writer writes IntResources ns/<id> through a state: each step sets one
// resource to a new value (labelled with its parity) or destroys it. It
// remembers the outcome of the last write acknowledged for each ID, and
// the outcomes of the writes that failed since, one of which may have
// been applied (a write whose context ends may or may not be).
type writer struct {
	st      state.State
	ns      resource.Namespace
	ids     []resource.ID
	n       int
	acked   map[resource.ID]outcome
	pending map[resource.ID][]outcome
	ok      int
	failed  int
}

func newWriter(st state.State, ns resource.Namespace, ids ...resource.ID) *writer {
	return &writer{st: st, ns: ns, ids: ids, acked: map[resource.ID]outcome{}, pending: map[resource.ID][]outcome{}}
}

// skip stops writing id.
func (w *writer) skip(id resource.ID) {
	w.ids = slices.DeleteFunc(slices.Clone(w.ids), func(x resource.ID) bool { return x == id })
	delete(w.acked, id)
	delete(w.pending, id)
}

// idsOf returns n IDs with the prefix p.
func idsOf(p string, n int) []resource.ID {
	ids := make([]resource.ID, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%02d", p, i)
	}
	return ids
}

// parity is the label every written resource carries.
func parity(v int) string {
	if v%2 == 0 {
		return "even"
	}
	return "odd"
}

// isEven selects the resources labelled even.
func isEven(r resource.Resource) bool {
	v, _ := r.Metadata().Labels().Get("parity")
	return v == "even"
}

func all(resource.Resource) bool { return true }

// step makes the next write with the given timeout and returns its error.
// Every ninth write destroys its resource; the others set it.
func (w *writer) step(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	w.n++
	id := w.ids[w.n%len(w.ids)]
	var err error
	out := outcome{exists: true, value: w.n}
	if w.n%9 == 0 {
		out = outcome{}
		err = w.st.Destroy(ctx, resource.NewPointer(w.ns, conformance.IntResourceType, id))
		if state.IsNotFoundError(err) {
			err = nil
		}
	} else {
		err = w.st.Modify(ctx, conformance.NewIntResource(w.ns, id, 0), func(r resource.Resource) error {
			in := r.(*conformance.IntResource)
			in.TypedSpec().Value = w.n
			in.Metadata().Labels().Set("parity", parity(w.n))
			return nil
		})
	}
	if err != nil {
		w.failed++
		w.pending[id] = append(w.pending[id], out)
		return err
	}
	w.ok++
	w.acked[id] = out
	delete(w.pending, id)
	return nil
}

// steps makes n writes that must all succeed.
func (w *writer) steps(t *testing.T, n int) {
	t.Helper()
	for range n {
		require.NoError(t, w.step(10*time.Second))
	}
}

// checkStored checks that every resource in etcd is whole — its value
// decodes — and is the outcome of the last acknowledged write to it or
// of one of the writes that failed since (never anything else).
func (w *writer) checkStored(t *testing.T, cli *clientv3.Client, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := w.st.List(ctx, resource.NewKind(w.ns, conformance.IntResourceType))
	require.NoError(t, err)
	raw, err := cli.Get(ctx, prefix+w.ns+"/"+conformance.IntResourceType+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	require.Equal(t, len(list.Items)+1, len(raw.Kvs), "every stored resource decodes (and the kind's head key)")
	stored := map[resource.ID]outcome{}
	for _, r := range list.Items {
		stored[r.Metadata().ID()] = outcome{exists: true, value: r.(*conformance.IntResource).TypedSpec().Value}
	}
	for _, id := range w.ids {
		got := stored[id]
		allowed := append([]outcome{w.acked[id]}, w.pending[id]...)
		assert.Contains(t, allowed, got, "%s is %s: the last acknowledged write or one that failed since (%v)", id, got, allowed)
	}
}

// isClear reports whether a write's error says what failed and why: it
// names the state (the etcd core, or the state's helper whose context
// ended between its attempts) and the resource, and is a context or
// connection error (not a conflict, not an invalid input).
func isClear(err error, ns resource.Namespace) bool {
	msg := err.Error()
	return (strings.Contains(msg, "etcd state") || strings.HasPrefix(msg, "state: ")) && strings.Contains(msg, ns+"/") &&
		!state.IsConflictError(err) && !state.IsInvalidError(err) &&
		(errors.Is(err, context.DeadlineExceeded) || slices.ContainsFunc([]string{"Unavailable", "connection", "no leader"}, func(s string) bool { return strings.Contains(msg, s) }))
}
