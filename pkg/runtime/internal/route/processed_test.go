package route

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestQ1Extended_AProcessedUpdateIsNotQueued: an update of a primary
// input that its QController says it already reconciled, as it is (see
// Subscriber.Processed), is not queued; every other change is — an update
// to a version not reconciled, a creation, a destruction, a first
// listing (bootstrap), and a mapped input's change, whatever the
// controller says.
func TestQ1Extended_AProcessedUpdateIsNotQueued(t *testing.T) {
	done := resource.NewVersion(2) // the version the controller reconciled
	var asked []resource.Version
	sub := &Subscriber{
		Queue: queue.New[work.Item, telemetry.Pending](retry.Policy{}),
		Last:  &work.LastSeen{},
		Floor: &cache.Floor{},
		Processed: func(md *resource.Metadata) bool {
			asked = append(asked, md.Version())
			return md.Version().Equal(done)
		},
	}
	primary := []Subscription{{Handle: sub, Name: "c", Kind: controller.InputQPrimary}}
	mapped := []Subscription{{Handle: sub, Name: "c", Kind: controller.InputQMapped}}
	at := func(id string, v resource.Version) (state.Event, *resource.Metadata) {
		r := typed.New[benchSpec, benchDef](resource.NewMetadata("test", "As.test.resgraph.dev", id, v), benchSpec{})
		return state.Event{Type: state.Updated, Resource: r, Old: r}, r.Metadata()
	}
	var sc scratch
	for _, tc := range []struct {
		name      string
		subs      []Subscription
		t         state.EventType
		v         resource.Version
		bootstrap bool
		queued    bool
	}{
		{"an update to the version reconciled", primary, state.Updated, done, false, false},
		{"an update to another version", primary, state.Updated, done.Next(), false, true},
		{"a creation", primary, state.Created, done, false, true},
		{"a destruction", primary, state.Destroyed, done, false, true},
		{"a first listing (its update)", primary, state.Updated, done, true, true},
		{"a mapped input's update", mapped, state.Updated, done, false, true},
	} {
		ev, md := at(tc.name, tc.v)
		ev.Type = tc.t
		deliver(tc.subs, []state.Event{ev}, []*resource.Metadata{md}, &sc, tc.bootstrap, 1, &telemetry.Batch{})
		got := sub.Queue.Len() == 1
		assert.Equal(t, tc.queued, got, tc.name)
		if got {
			_, ok := sub.Queue.Get(context.Background())
			require.True(t, ok)
			sub.Queue.Done(work.Item{Ptr: resource.PointerOf(md), Map: tc.subs[0].Kind != controller.InputQPrimary}, queue.Success())
		}
		require.Zero(t, sub.Queue.Len(), tc.name)
	}
	assert.Equal(t, []resource.Version{done, done.Next()}, asked, "asked about the primary input's updates only")
}
