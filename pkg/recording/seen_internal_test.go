package recording

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestRC1_ABatchOfSeveralKindsNotesEachKindsNewestChange: Sync's
// per-kind wait reads each kind's newest revision the window holds; a
// batch whose kinds alternate, with revisions not in order, notes the
// newest of each kind, the batch's last run included.
func TestRC1_ABatchOfSeveralKindsNotesEachKindsNewestChange(t *testing.T) {
	rec, _ := liveSink(t, make(chan struct{}, 1))
	vKind := resource.NewKind("v", def{}.Definition().Type)
	inV := func(id string) resource.Resource {
		return typed.New[spec, def](resource.NewMetadata("v", vKind.Type(), resource.ID(id), resource.VersionUndefined.Next()), spec{})
	}
	evs := []state.Event{
		{Type: state.Created, Resource: at("a", 1), Revision: 5},
		{Type: state.Created, Resource: inV("b"), Revision: 9},
		{Type: state.Created, Resource: inV("c"), Revision: 7},
		{Type: state.Created, Resource: at("d", 1), Revision: 6},
		{Type: state.Created, Resource: at("e", 1), Revision: 4},
		{Type: state.Noop, Revision: 12},
		{Type: state.Created, Resource: inV("f"), Revision: 8},
		{Type: state.Created, Resource: at("g", 1), Revision: 10},
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.addEventsLocked(evs, time.Now())
	assert.Equal(t, uint64(10), rec.seen[resource.KindOf(wsKind)], "the newest change of w (the batch's last)")
	assert.Equal(t, uint64(9), rec.seen[resource.KindOf(vKind)], "the newest change of v")
	rec.addEventsLocked(evs[4:5], time.Now())
	assert.Equal(t, uint64(10), rec.seen[resource.KindOf(wsKind)], "an older change lowers nothing")
}
