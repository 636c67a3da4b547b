package runtime_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// TestWatchFailure_ResumedThroughAGuard: a Runtime over a state guarded by
// access.Guard resumes a failed kind watch from its bookmark, as over the
// state itself, rather than listing the kind again against a memory of
// what it routed: the guard resumes kind watches when its state does
// (state.KindWatchResumer). The change made while the watch was down
// reaches MapInput once.
func TestWatchFailure_ResumedThroughAGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newResumingState(typeB)
		admin := access.Identity{Transport: access.UnixPeer, UID: 4711}
		p, err := access.NewPolicy(nil, access.Rules{
			Roles:    []access.Role{{Name: "admin", Grants: []access.Grant{{Verbs: access.AllVerbs, Namespaces: []string{"*"}, Types: []string{"*"}}}}},
			Bindings: []access.Binding{{Role: "admin", To: []access.Match{access.UID(4711)}}},
		})
		require.NoError(t, err)
		var rec mapRecorder
		e := start(t, runtimetest.WithState(p.Guard(st, admin)),
			runtimetest.WithQControllers(rec.controller("q", controller.InputQMapped)))
		mustCreate(t, st, childOf("m1", "a1"))
		runtimetest.Settle(t, e.Runtime)

		st.breakLatest()
		synctest.Wait()
		require.NoError(t, st.Modify(context.Background(), newPair(typeB, "m1", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 1; return nil }))
		time.Sleep(time.Second) // the re-watch backoff
		runtimetest.Settle(t, e.Runtime)
		assert.Equal(t, []string{"list", "resume"}, st.openings(), "resumed through the guard, not listed again")
		assert.Equal(t, []string{"live parent=a1 v1", "live parent=a1 v2"}, rec.of("m1"))
	})
}
