package debughttp

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/observe"
)

// TestLiveStateWords: the live page's states are its own words, none of
// which means something else in the engine's states: "busy" (a reconcile
// running or due), never "running" (an engine state: the controller is
// started); "retrying" (items wait out a retry backoff), never "backoff"
// (an engine state: a crashed Controller waits out its restart backoff,
// shown as "crashed").
func TestLiveStateWords(t *testing.T) {
	running := observe.ControllerStatus{State: observe.StateRunning}
	failed := observe.ControllerStatus{State: observe.StateRunning, LastError: "boom"}
	for _, tc := range []struct {
		name string
		s    observe.ControllerStatus
		a    observe.ControllerActivity
		want string
	}{
		{"starting", observe.ControllerStatus{State: observe.StateStarting}, observe.ControllerActivity{Busy: true}, LiveStarting},
		{"stopped", observe.ControllerStatus{State: observe.StateStopped}, observe.ControllerActivity{}, LiveStopped},
		{"restart backoff", observe.ControllerStatus{State: observe.StateBackoff}, observe.ControllerActivity{}, LiveCrashed},
		{"hot loop", observe.ControllerStatus{State: observe.StateRunning, HotLoop: "A writes X → A"}, observe.ControllerActivity{Busy: true}, LiveHotLoop},
		{"reconciling", running, observe.ControllerActivity{Busy: true, InFlight: 1}, LiveBusy},
		{"items due", running, observe.ControllerActivity{Busy: true, Due: 2}, LiveBusy},
		{"retrying", failed, observe.ControllerActivity{Delayed: 1}, LiveRetrying},
		{"requeued without error", running, observe.ControllerActivity{Delayed: 1}, LiveIdle},
		{"idle", running, observe.ControllerActivity{}, LiveIdle},
	} {
		assert.Equal(t, tc.want, liveState(tc.s, tc.a), tc.name)
	}
	engine := []string{observe.StateStarting.String(), observe.StateRunning.String(), observe.StateBackoff.String(), observe.StateStopped.String()}
	for _, live := range []string{LiveBusy, LiveIdle, LiveRetrying, LiveCrashed, LiveHotLoop} {
		assert.NotContains(t, engine, live, "a live word that is not an engine state never spells one")
	}
}
