package controller_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
)

func in(ns, typ string, id optional.Optional[string], kind controller.InputKind) controller.Input {
	return controller.Input{Namespace: ns, Type: typ, ID: id, Kind: kind}
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	default:
		return 0
	}
}

// TestInputCompare_Order specifies the precedence of the fields: namespace,
// then type, then ID (absent before present), then kind.
func TestInputCompare_Order(t *testing.T) {
	none := optional.None[string]()
	some := optional.Some[string]

	for name, tc := range map[string]struct {
		less, more controller.Input
	}{
		"namespace first":                     {in("a", "z", some("z"), controller.InputQMapped), in("b", "a", none, controller.InputWeak)},
		"type after namespace":                {in("n", "a", some("z"), controller.InputQMapped), in("n", "b", none, controller.InputWeak)},
		"absent ID before present ID":         {in("n", "t", none, controller.InputQMapped), in("n", "t", some("a"), controller.InputWeak)},
		"absent ID before present empty ID":   {in("n", "t", none, controller.InputStrong), in("n", "t", some(""), controller.InputWeak)},
		"ID after presence":                   {in("n", "t", some("a"), controller.InputQMapped), in("n", "t", some("b"), controller.InputWeak)},
		"kind last, absent IDs":               {in("n", "t", none, controller.InputWeak), in("n", "t", none, controller.InputStrong)},
		"kind last, present IDs":              {in("n", "t", some("a"), controller.InputStrong), in("n", "t", some("a"), controller.InputDestroyReady)},
		"empty namespace before any other":    {in("", "z", none, controller.InputWeak), in("a", "a", none, controller.InputWeak)},
		"namespaces compare bytewise":         {in("B", "t", none, controller.InputWeak), in("a", "t", none, controller.InputWeak)},
		"kinds compare numerically (Q kinds)": {in("n", "t", none, controller.InputQPrimary), in("n", "t", none, controller.InputQMappedDestroyReady)},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Negative(t, tc.less.Compare(tc.more))
			assert.Positive(t, tc.more.Compare(tc.less))
		})
	}
}

// TestInputCompare_ZeroIffEqual: Compare is 0 exactly for equal inputs.
func TestInputCompare_ZeroIffEqual(t *testing.T) {
	a := in("n", "t", optional.Some("id"), controller.InputStrong)
	assert.Zero(t, a.Compare(a))
	assert.Zero(t, a.Compare(in("n", "t", optional.Some("id"), controller.InputStrong)))
	assert.Zero(t, controller.Input{}.Compare(controller.Input{}))

	for name, b := range map[string]controller.Input{
		"namespace":   in("m", "t", optional.Some("id"), controller.InputStrong),
		"type":        in("n", "u", optional.Some("id"), controller.InputStrong),
		"ID":          in("n", "t", optional.Some("other"), controller.InputStrong),
		"ID presence": in("n", "t", optional.None[string](), controller.InputStrong),
		"kind":        in("n", "t", optional.Some("id"), controller.InputWeak),
	} {
		t.Run("differs in "+name, func(t *testing.T) {
			assert.NotZero(t, a.Compare(b))
			assert.NotZero(t, b.Compare(a))
		})
	}
}

// inputSet generates every combination of a few values per field, with
// near-collisions (empty strings, absent vs present empty ID).
func inputSet() []controller.Input {
	var out []controller.Input
	for _, ns := range []string{"", "a", "b"} {
		for _, typ := range []string{"", "T", "t"} {
			for _, id := range []optional.Optional[string]{optional.None[string](), optional.Some(""), optional.Some("1"), optional.Some("2")} {
				for _, kind := range []controller.InputKind{controller.InputWeak, controller.InputStrong, controller.InputQMappedDestroyReady} {
					out = append(out, in(ns, typ, id, kind))
				}
			}
		}
	}
	return out
}

// TestInputCompare_TotalOrder checks, over every pair and triple of a
// generated set, that Compare is reflexive, antisymmetric, zero only for
// equal inputs, transitive, decided by the first differing field, and that
// sorting with it gives one strictly increasing order whatever the start.
func TestInputCompare_TotalOrder(t *testing.T) {
	set := inputSet()
	require.Len(t, set, 108)

	for _, a := range set {
		for _, b := range set {
			ab, ba := a.Compare(b), b.Compare(a)
			if !assert.Equal(t, sign(ab), -sign(ba), "antisymmetry: %+v vs %+v", a, b) {
				return
			}
			if !assert.Equal(t, a == b, ab == 0, "zero iff equal: %+v vs %+v", a, b) {
				return
			}
			if a != b && !assert.Equal(t, precedence(a, b), sign(ab), "precedence: %+v vs %+v", a, b) {
				return
			}
		}
	}

	for _, a := range set {
		for _, b := range set {
			if a.Compare(b) > 0 {
				continue
			}
			for _, c := range set {
				if b.Compare(c) <= 0 && !assert.LessOrEqual(t, a.Compare(c), 0, "transitivity: %+v <= %+v <= %+v", a, b, c) {
					return
				}
			}
		}
	}

	sorted := slices.Clone(set)
	slices.SortFunc(sorted, controller.Input.Compare)
	for i := 1; i < len(sorted); i++ {
		require.Negative(t, sorted[i-1].Compare(sorted[i]), "sorted[%d] < sorted[%d]", i-1, i)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		shuffled := slices.Clone(set)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		slices.SortFunc(shuffled, controller.Input.Compare)
		require.Equal(t, sorted, shuffled, "sort result does not depend on the starting order")
	}
}

// precedence is the sign the contract demands for distinct a and b: the
// first field that differs (namespace, type, ID presence, ID, kind) decides.
func precedence(a, b controller.Input) int {
	switch {
	case a.Namespace != b.Namespace:
		return cmp.Compare(a.Namespace, b.Namespace)
	case a.Type != b.Type:
		return cmp.Compare(a.Type, b.Type)
	case a.ID.IsPresent() != b.ID.IsPresent():
		if a.ID.IsPresent() {
			return 1
		}
		return -1
	case a.ID != b.ID:
		return cmp.Compare(a.ID.ValueOrZero(), b.ID.ValueOrZero())
	default:
		return sign(int(a.Kind) - int(b.Kind))
	}
}

// TestInputEqualKeys: same namespace, type and ID (presence included)
// whatever the kinds.
func TestInputEqualKeys(t *testing.T) {
	base := in("n", "t", optional.Some("id"), controller.InputWeak)

	for name, tc := range map[string]struct {
		other controller.Input
		want  bool
	}{
		"identical":        {base, true},
		"other kind":       {in("n", "t", optional.Some("id"), controller.InputStrong), true},
		"other Q kind":     {in("n", "t", optional.Some("id"), controller.InputQMappedDestroyReady), true},
		"other namespace":  {in("m", "t", optional.Some("id"), controller.InputWeak), false},
		"other type":       {in("n", "u", optional.Some("id"), controller.InputWeak), false},
		"other ID":         {in("n", "t", optional.Some("other"), controller.InputWeak), false},
		"absent ID":        {in("n", "t", optional.None[string](), controller.InputWeak), false},
		"present empty ID": {in("n", "t", optional.Some(""), controller.InputWeak), false},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, base.EqualKeys(tc.other))
			assert.Equal(t, tc.want, tc.other.EqualKeys(base), "symmetric")
		})
	}

	t.Run("absent ID differs from present empty ID", func(t *testing.T) {
		assert.False(t, in("n", "t", optional.None[string](), controller.InputWeak).EqualKeys(in("n", "t", optional.Some(""), controller.InputWeak)))
	})

	t.Run("agrees with Compare ignoring kind", func(t *testing.T) {
		set := inputSet()
		for _, a := range set {
			for _, b := range set {
				ak, bk := a, b
				ak.Kind, bk.Kind = 0, 0
				if !assert.Equal(t, ak.Compare(bk) == 0, a.EqualKeys(b), "%+v vs %+v", a, b) {
					return
				}
			}
		}
	})
}

// TestInputKind_String: every input kind prints as its constant's name, an
// undefined one as InputKind(n); %v uses it (error messages name the kind).
func TestInputKind_String(t *testing.T) {
	for want, k := range map[string]controller.InputKind{
		"InputWeak":                controller.InputWeak,
		"InputStrong":              controller.InputStrong,
		"InputDestroyReady":        controller.InputDestroyReady,
		"InputQPrimary":            controller.InputQPrimary,
		"InputQMapped":             controller.InputQMapped,
		"InputQMappedDestroyReady": controller.InputQMappedDestroyReady,
		"InputKind(6)":             controller.InputQMappedDestroyReady + 1,
		"InputKind(-1)":            controller.InputKind(-1),
	} {
		t.Run(want, func(t *testing.T) {
			assert.Equal(t, want, k.String())
			assert.Equal(t, want, fmt.Sprintf("%v", k))
		})
	}
}

// TestOutputKind_String: every output kind prints as its constant's name,
// an undefined one as OutputKind(n).
func TestOutputKind_String(t *testing.T) {
	for want, k := range map[string]controller.OutputKind{
		"OutputExclusive": controller.OutputExclusive,
		"OutputShared":    controller.OutputShared,
		"OutputKind(2)":   controller.OutputShared + 1,
		"OutputKind(-1)":  controller.OutputKind(-1),
	} {
		t.Run(want, func(t *testing.T) {
			assert.Equal(t, want, k.String())
			assert.Equal(t, want, fmt.Sprintf("%v", k))
		})
	}
}

// TestInputOutputKind_Values pins the numeric values: they are part of the
// contract's iota order.
func TestInputOutputKind_Values(t *testing.T) {
	assert.Equal(t, []controller.InputKind{0, 1, 2, 3, 4, 5}, []controller.InputKind{
		controller.InputWeak, controller.InputStrong, controller.InputDestroyReady,
		controller.InputQPrimary, controller.InputQMapped, controller.InputQMappedDestroyReady,
	})
	assert.Equal(t, []controller.OutputKind{0, 1}, []controller.OutputKind{controller.OutputExclusive, controller.OutputShared})
}
