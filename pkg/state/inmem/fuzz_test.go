package inmem

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// modelEntry is a stored resource in the reference model.
type modelEntry struct {
	owner string
	fins  []string
	ver   uint64
	a     int
	phase resource.Phase
}

// errClass names the class of an error, for comparing with the model.
func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case state.IsOwnerConflictError(err):
		return "owner"
	case state.IsPhaseConflictError(err):
		return "phase"
	case state.IsPendingFinalizersError(err):
		return "finalizers"
	case state.IsConflictError(err):
		return "conflict"
	case state.IsNotFoundError(err):
		return "notfound"
	case state.IsInvalidError(err):
		return "invalid"
	default:
		return "other: " + err.Error()
	}
}

// FuzzStateAgainstModel decodes the input into a sequence of operations
// over a few IDs, owners and finalizers, applies them to the state and to a
// plain map, and requires the same results (error classes, versions,
// contents). A kind watcher with a history of 1 to 16 changes, not read
// until the end, must then reach the final contents through events that
// agree with what it saw (rule S12).
func FuzzStateAgainstModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0, 6, 0, 0, 7, 0, 0})
	f.Add([]byte{3, 0, 1, 0, 0, 1, 4, 0, 0, 3, 0, 0, 2, 0, 0, 5, 0, 0, 2, 0, 0, 0, 0, 0})
	f.Add([]byte{8, 5, 0, 9, 5, 1, 1, 5, 0, 17, 5, 3, 10, 5, 0, 0, 1, 1, 1, 1, 9, 2, 1, 0, 7, 0, 0})
	f.Add([]byte{15, 0, 0, 0, 1, 2, 0, 2, 3, 0, 3, 4, 1, 1, 6, 2, 1, 0, 0, 1, 0, 1, 3, 8})
	f.Fuzz(stateAgainstModel)
}

// maxFuzzOps bounds the operations of one input (the rest is ignored),
// which keeps inputs cheap to run and to minimize.
const maxFuzzOps = 120

func stateAgainstModel(t *testing.T, data []byte) {
	if len(data) == 0 {
		return
	}
	capacity := 1 + int(data[0]%16)
	data = data[1:min(len(data), 1+3*maxFuzzOps)]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := NewState(WithHistoryCapacity(capacity))
	watch := make(chan state.Event, 1)
	require.NoError(t, st.WatchKind(ctx, testKind, watch, state.WithBootstrapContents(true)))

	ids := []string{"a", "b", "c", "d"}
	owners := []string{"", "o1", "o2"}
	finalizers := []string{"f1", "f2"}
	model := map[string]*modelEntry{}

	for step := 0; len(data) >= 3; step++ {
		op, x, y := data[0], data[1], data[2]
		data = data[3:]
		id := ids[x%4]
		owner := owners[(x>>2)%3]
		cur := model[id]
		switch op % 8 {
		case 0: // Create
			r := newPair(id, step)
			_ = r.Metadata().SetOwner("ignored")
			if y&1 != 0 {
				r.Metadata().Finalizers().Add(finalizers[0])
			}
			want := "ok"
			if cur != nil {
				want = "conflict"
			}
			require.Equal(t, want, errClass(st.Create(ctx, r, state.WithCreateOwner(owner))), "step %d create %s", step, id)
			if cur == nil {
				model[id] = &modelEntry{owner: owner, fins: slices.Clone([]string(*r.Metadata().Finalizers())), ver: 1, a: step}
				require.Equal(t, uint64(1), version(r), "version written back")
			}
		case 1: // Update
			r := newPair(id, step)
			ver := uint64(1)
			if cur != nil {
				ver = cur.ver
				*r.Metadata().Finalizers() = slices.Clone(cur.fins)
			}
			if y&1 != 0 {
				ver++
			}
			r.Metadata().SetVersion(resource.NewVersion(ver))
			_ = r.Metadata().SetOwner("ignored")
			newPhase := resource.Phase((y >> 3) & 1)
			r.Metadata().SetPhase(newPhase)
			opts := []state.UpdateOption{state.WithUpdateOwner(owner)}
			var expected *resource.Phase
			switch (y >> 1) % 3 {
			case 0:
				p := resource.PhaseRunning
				expected = &p
			case 1:
				p := resource.PhaseTearingDown
				expected = &p
				opts = append(opts, state.WithExpectedPhase(p))
			case 2:
				opts = append(opts, state.WithExpectedPhaseAny())
			}
			want := "ok"
			switch {
			case cur == nil:
				want = "notfound"
			case cur.ver != ver:
				want = "conflict"
			case cur.owner != owner:
				want = "owner"
			case expected != nil && cur.phase != *expected:
				want = "phase"
			}
			require.Equal(t, want, errClass(st.Update(ctx, r, opts...)), "step %d update %s", step, id)
			if want == "ok" {
				cur.ver++
				cur.a = step
				cur.phase = newPhase
				require.Equal(t, cur.ver, version(r), "version written back")
			}
		case 2: // Destroy
			want := "ok"
			switch {
			case cur == nil:
				want = "notfound"
			case cur.owner != owner:
				want = "owner"
			case len(cur.fins) > 0:
				want = "finalizers"
			}
			require.Equal(t, want, errClass(st.Destroy(ctx, ptr(id), state.WithDestroyOwner(owner))), "step %d destroy %s", step, id)
			if want == "ok" {
				delete(model, id)
			}
		case 3: // Teardown
			empty, err := st.Teardown(ctx, ptr(id), state.WithTeardownOwner(owner))
			want := "ok"
			switch {
			case cur == nil:
				want = "notfound"
			case cur.owner != owner:
				want = "owner"
			}
			require.Equal(t, want, errClass(err), "step %d teardown %s", step, id)
			if want == "ok" {
				require.Equal(t, len(cur.fins) == 0, empty)
				if cur.phase != resource.PhaseTearingDown {
					cur.phase = resource.PhaseTearingDown
					cur.ver++
				}
			}
		case 4, 5: // AddFinalizer, RemoveFinalizer
			fin := finalizers[y%2]
			var err error
			if op%8 == 4 {
				err = st.AddFinalizer(ctx, ptr(id), fin)
			} else {
				err = st.RemoveFinalizer(ctx, ptr(id), fin)
			}
			want := "ok"
			if cur == nil {
				want = "notfound"
			}
			require.Equal(t, want, errClass(err), "step %d finalizer %s", step, id)
			if cur != nil {
				has := slices.Contains(cur.fins, fin)
				switch {
				case op%8 == 4 && !has:
					cur.fins = append(cur.fins, fin)
					cur.ver++
				case op%8 == 5 && has:
					cur.fins = slices.DeleteFunc(cur.fins, func(f string) bool { return f == fin })
					cur.ver++
				}
			}
		case 6: // Get
			r, err := st.Get(ctx, ptr(id))
			if cur == nil {
				require.Equal(t, "notfound", errClass(err), "step %d get %s", step, id)
				continue
			}
			require.NoError(t, err, "step %d get %s", step, id)
			requireMatchesModel(t, cur, r)
		case 7: // List
			list, err := st.List(ctx, testKind)
			require.NoError(t, err)
			requireListMatchesModel(t, model, list.Items)
		}
	}

	list, err := st.List(ctx, testKind)
	require.NoError(t, err)
	requireListMatchesModel(t, model, list.Items)
	final := map[resource.ID]resource.Resource{}
	for _, r := range list.Items {
		final[r.Metadata().ID()] = r
	}
	seen := view{}
	for !seen.equals(final) {
		seen.apply(t, recv(t, watch))
	}
}

func requireMatchesModel(t *testing.T, want *modelEntry, r resource.Resource) {
	t.Helper()
	md := r.Metadata()
	require.Equal(t, want.ver, md.Version().Value(), "version of %s", md.ID())
	require.Equal(t, want.owner, md.Owner(), "owner of %s", md.ID())
	require.Equal(t, want.phase, md.Phase(), "phase of %s", md.ID())
	require.Equal(t, want.a, specA(t, r), "spec of %s", md.ID())
	require.ElementsMatch(t, want.fins, []string(*md.Finalizers()), "finalizers of %s", md.ID())
}

func requireListMatchesModel(t *testing.T, model map[string]*modelEntry, items []resource.Resource) {
	t.Helper()
	want := make([]string, 0, len(model))
	for id := range model {
		want = append(want, id)
	}
	slices.Sort(want)
	require.Equal(t, want, ids(items), "List holds the model's IDs, sorted")
	for _, r := range items {
		requireMatchesModel(t, model[r.Metadata().ID()], r)
	}
}
