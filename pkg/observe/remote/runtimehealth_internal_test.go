package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/observe"
)

// TestOB6_ChecksSayWhatTheRuntimeSays: every failing check of the
// Runtime's health is a failing check with its name and reason, and a
// probe passes exactly when the Runtime says so.
func TestOB6_ChecksSayWhatTheRuntimeSays(t *testing.T) {
	ctrls := []observe.ControllerStatus{{Name: "a"}, {Name: "b"}}
	for name, tc := range map[string]struct {
		h    observe.Health
		want []Check
	}{
		"not running": {
			h: observe.Health{NotReady: []observe.HealthCheck{{Reason: "not running: Run has not started"}},
				NotLive: []observe.HealthCheck{{Reason: "not running: Run has not started"}}},
			want: []Check{
				{Probe: Readiness, Name: "runtime", Message: "not running: Run has not started"},
				{Probe: Liveness, Name: "runtime", Message: "not running: Run has not started"},
			},
		},
		"a controller not ready, a kind and a controller not live": {
			h: observe.Health{Live: false, NotReady: []observe.HealthCheck{{Controller: "b", Reason: "catching up"}, {Controller: "gone", Reason: "x"}},
				NotLive: []observe.HealthCheck{{Controller: "a", Reason: "stuck in one pass for 2m0s"}, {Kind: "T(ns)", Reason: "watch down for 2m0s"}}},
			want: []Check{
				{Probe: Readiness, Name: "runtime", Message: "not ready: see the failing checks"},
				{Probe: Readiness, Name: "controller a", OK: true, Message: "started, caught up with the first listing of its inputs, knows its leadership role"},
				{Probe: Readiness, Name: "controller b", Message: "catching up"},
				{Probe: Readiness, Name: "controller gone", Message: "x"},
				{Probe: Liveness, Name: "runtime", Message: "not live: see the failing checks"},
				{Probe: Liveness, Name: "controller a", Message: "stuck in one pass for 2m0s"},
				{Probe: Liveness, Name: "kind T(ns)", Message: "watch down for 2m0s"},
			},
		},
		"ready and live": {
			h: observe.Health{Ready: true, Live: true},
			want: []Check{
				{Probe: Readiness, Name: "runtime", OK: true, Message: "ready"},
				{Probe: Readiness, Name: "controller a", OK: true, Message: "started, caught up with the first listing of its inputs, knows its leadership role"},
				{Probe: Readiness, Name: "controller b", OK: true, Message: "started, caught up with the first listing of its inputs, knows its leadership role"},
				{Probe: Liveness, Name: "runtime", OK: true, Message: "live: its loops are moving"},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := runtimeChecks(tc.h, ctrls)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.h.Ready, Passing(got, Readiness))
			assert.Equal(t, tc.h.Live, Passing(got, Liveness))
		})
	}
}
