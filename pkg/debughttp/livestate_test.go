package debughttp

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/observe"
)

// TestLiveStateWords: the live page's states are its own words, none of
// which means something else in the Runtime's states: "busy" (a reconcile
// running or due), never "running" (a Runtime state: the controller is
// started); "retrying" (items wait out a retry backoff), never "backoff"
// (a Runtime state: a crashed Controller waits out its restart backoff,
// shown as "crashed").
func TestLiveStateWords(t *testing.T) {
	running := observe.ControllerStatus{Lifecycle: observe.LifecycleRunning}
	failed := observe.ControllerStatus{Lifecycle: observe.LifecycleRunning, LastError: "boom"}
	for _, tc := range []struct {
		name string
		s    observe.ControllerStatus
		a    observe.ControllerActivity
		want string
	}{
		{"starting", observe.ControllerStatus{Lifecycle: observe.LifecycleStarting}, observe.ControllerActivity{Busy: true}, LiveStarting},
		{"stopped", observe.ControllerStatus{Lifecycle: observe.LifecycleStopped}, observe.ControllerActivity{}, LiveStopped},
		{"restart backoff", observe.ControllerStatus{Lifecycle: observe.LifecycleBackoff}, observe.ControllerActivity{}, LiveCrashed},
		{"parked by a denial", observe.ControllerStatus{Lifecycle: observe.LifecycleParked}, observe.ControllerActivity{}, LiveCrashed},
		{"hot loop", observe.ControllerStatus{Lifecycle: observe.LifecycleRunning, HotLoop: "A writes X → A"}, observe.ControllerActivity{Busy: true}, LiveHotLoop},
		{"reconciling", running, observe.ControllerActivity{Busy: true, InFlight: 1}, LiveBusy},
		{"items due", running, observe.ControllerActivity{Busy: true, Due: 2}, LiveBusy},
		{"retrying", failed, observe.ControllerActivity{Delayed: 1}, LiveRetrying},
		{"requeued without error", running, observe.ControllerActivity{Delayed: 1}, LiveIdle},
		{"idle", running, observe.ControllerActivity{}, LiveIdle},
		{"standby", observe.ControllerStatus{Lifecycle: observe.LifecycleStopped, Leadership: &observe.Leadership{Role: observe.RoleStandby}}, observe.ControllerActivity{}, LiveStandby},
		{"leader", observe.ControllerStatus{Lifecycle: observe.LifecycleRunning, Leadership: &observe.Leadership{Role: observe.RoleLeader}}, observe.ControllerActivity{Busy: true}, LiveBusy},
	} {
		assert.Equal(t, tc.want, liveState(tc.s, tc.a), tc.name)
	}
	engine := []string{observe.LifecycleStarting.String(), observe.LifecycleRunning.String(), observe.LifecycleBackoff.String(), observe.LifecycleStopped.String()}
	for _, live := range []string{LiveBusy, LiveIdle, LiveRetrying, LiveCrashed, LiveHotLoop} {
		assert.NotContains(t, engine, live, "a live word that is not a Runtime state never spells one")
	}
}

// loopObserver is fakeObserver with a hot loop flagged.
type loopObserver struct{ fakeObserver }

func (loopObserver) HotLoops() []observe.HotLoop {
	return []observe.HotLoop{{Cycle: "A<b> writes T(ns/x) → A<b>", Controllers: []string{"A<b>"}, Rate: 12.5, Since: tNow.Add(-3 * time.Second)}}
}

// TestControllersPageListsHotLoops: the controllers page lists the hot
// loops flagged now, escaped, in HTML and JSON; none listed without one.
func TestControllersPageListsHotLoops(t *testing.T) {
	now := func() time.Time { return tNow }
	srv := httptest.NewServer(controllersPage{obs: loopObserver{}, now: now})
	t.Cleanup(srv.Close)
	_, body := fetch(t, srv.URL)
	assert.Contains(t, body, "<h2>Hot loops</h2>")
	assert.Contains(t, body, "A&lt;b&gt; writes T(ns/x) → A&lt;b&gt; (12.5/s, since 15:04:02.000, 3s ago)")
	_, body = fetch(t, srv.URL+"?format=json")
	var doc StatusDocument
	require.NoError(t, json.Unmarshal([]byte(body), &doc))
	require.Len(t, doc.HotLoops, 1)
	assert.Equal(t, []string{"A<b>"}, doc.HotLoops[0].Controllers)

	quiet := httptest.NewServer(controllersPage{obs: fakeObserver{}, now: now})
	t.Cleanup(quiet.Close)
	_, body = fetch(t, quiet.URL)
	assert.NotContains(t, body, "Hot loops")
	_, body = fetch(t, quiet.URL+"?format=json")
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &raw))
	assert.NotContains(t, raw, "hotLoops")
}
