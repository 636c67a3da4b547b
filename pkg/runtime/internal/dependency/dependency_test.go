package dependency

import (
	"slices"
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSnapshot_SubscriptionsByKindIncludingDynamic(t *testing.T) {
	db := New[int]()
	k := resource.KindOf(resource.NewKind("ns", "T"))
	require.NoError(t, db.Add(Record[int]{Handle: 1, Name: "b", Family: FamilyController,
		Static: []controller.Input{{Namespace: "ns", Type: "T", ID: optional.Some("x"), Kind: controller.InputStrong}}}))
	require.NoError(t, db.Add(Record[int]{Handle: 2, Name: "a", Family: FamilyController}))
	old := db.Snapshot()
	changed, err := db.SetDynamic("a", []controller.Input{{Namespace: "ns", Type: "T", Kind: controller.InputWeak}})
	require.NoError(t, err)
	assert.True(t, changed)

	assert.Len(t, old.For(k), 1, "a published snapshot never changes")
	subs := slices.Clone(db.Snapshot().For(k))
	require.Len(t, subs, 2)
	for i := range subs {
		require.NotNil(t, subs[i].Routed, "every subscription counts its deliveries")
		subs[i].Routed = nil
	}
	assert.Equal(t, Subscription[int]{Handle: 2, Name: "a", Kind: controller.InputWeak}, subs[0], "sorted by name")
	assert.Equal(t, Subscription[int]{Handle: 1, Name: "b", ID: "x", HasID: true, Kind: controller.InputStrong}, subs[1])
	assert.Equal(t, []resource.KindKey{k}, db.Snapshot().Keys())

	_, err = db.SetDynamic("a", []controller.Input{{Namespace: "ns", Kind: controller.InputWeak}})
	assert.True(t, state.IsInvalidError(err))
	assert.Len(t, db.Snapshot().For(k), 2, "a refused update changes nothing")
	_, err = db.SetDynamic("missing", nil)
	assert.True(t, state.IsInvalidError(err))
}

func TestSnapshot_ForDoesNotAllocate(t *testing.T) {
	db := New[int]()
	require.NoError(t, db.Add(Record[int]{Handle: 1, Name: "a", Family: FamilyController,
		Static: []controller.Input{{Namespace: "ns", Type: "T"}}}))
	k := resource.KindOf(resource.NewKind("ns", "T"))
	allocs := testing.AllocsPerRun(100, func() { _ = db.Snapshot().For(k) })
	assert.Zero(t, allocs)
}

func TestSetDynamic_SameSetIsNoChange(t *testing.T) {
	db := New[int]()
	require.NoError(t, db.Add(Record[int]{Handle: 1, Name: "a", Family: FamilyController}))
	x := controller.Input{Namespace: "ns", Type: "T", ID: optional.Some("x"), Kind: controller.InputStrong}
	all := controller.Input{Namespace: "ns", Type: "T", Kind: controller.InputWeak}

	changed, err := db.SetDynamic("a", []controller.Input{x, all})
	require.NoError(t, err)
	assert.True(t, changed)
	snap := db.Snapshot()

	changed, err = db.SetDynamic("a", []controller.Input{all, x, all})
	require.NoError(t, err)
	assert.False(t, changed, "the same set in another order, with a duplicate")
	assert.Same(t, snap, db.Snapshot(), "no new snapshot")
	_, dynamic := db.Inputs("a")
	assert.Equal(t, []controller.Input{all, x}, dynamic, "stored sorted, without duplicates")

	x.Kind = controller.InputWeak
	changed, err = db.SetDynamic("a", []controller.Input{all, x})
	require.NoError(t, err)
	assert.True(t, changed, "another kind is another input")

	changed, err = db.SetDynamic("a", nil)
	require.NoError(t, err)
	assert.True(t, changed)
	changed, err = db.SetDynamic("a", []controller.Input{})
	require.NoError(t, err)
	assert.False(t, changed, "empty and nil are the same set")
}

// TestInputCounts_KeptAcrossSnapshots: an input's delivery counter is the
// same in every snapshot, so that what was counted survives a change of
// the dynamic inputs; InputCounts lists the inputs declared now.
func TestInputCounts_KeptAcrossSnapshots(t *testing.T) {
	db := New[int]()
	static := controller.Input{Namespace: "ns", Type: "T", Kind: controller.InputWeak}
	dyn := controller.Input{Namespace: "ns", Type: "U", Kind: controller.InputStrong}
	require.NoError(t, db.Add(Record[int]{Handle: 1, Name: "a", Family: FamilyController, Static: []controller.Input{static}}))
	db.Snapshot().For(resource.KindOf(resource.NewKind("ns", "T")))[0].Routed.Add(3)
	_, err := db.SetDynamic("a", []controller.Input{dyn})
	require.NoError(t, err)
	db.Snapshot().For(resource.KindOf(resource.NewKind("ns", "T")))[0].Routed.Add(1)
	db.Snapshot().For(resource.KindOf(resource.NewKind("ns", "U")))[0].Routed.Add(2)
	assert.Equal(t, []InputCount{{Input: static, Routed: 4}, {Input: dyn, Routed: 2}}, db.InputCounts("a"))
	_, err = db.SetDynamic("a", nil)
	require.NoError(t, err)
	assert.Equal(t, []InputCount{{Input: static, Routed: 4}}, db.InputCounts("a"), "inputs declared now")
	assert.Nil(t, db.InputCounts("nobody"))
	assert.Equal(t, []controller.Output(nil), db.Outputs("a"))
}
