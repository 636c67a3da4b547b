package observe

import (
	"strings"
	"time"
)

// Health is whether a Runtime is ready and live, with every check that
// fails, each saying what is not ready or not moving and why. It is what
// the debug handler's /readyz and /healthz serve, what systemd's notify
// protocol (package notify) reports, and what an API server's health
// service (gRPC health) and a CLI print: [HealthOf] gets it from an
// [Observer].
//
// Ready: the Runtime runs, and every controller has started, has caught
// up with the first listing (bootstrap) of its inputs — a Controller has
// ended its first pass, a QController has run every item its inputs'
// first listings queued — and knows its leadership role (it leads, or
// another replica does; a controller whose campaign fails does not know).
// Once caught up, a controller stays caught up (a later crash is a
// liveness and status matter), but a standby that starts leading catches
// up again.
//
// Live: the Runtime runs and its loops are moving: no controller is stuck
// in one reconcile (a Controller's pass, a QController's Reconcile or
// MapInput) for longer than the Runtime's health bound
// (runtime.WithHealthBound), and no kind watch has been down (failed, not
// re-established), nor its router stuck with changes it does not route,
// for longer than the bound.
//
// In JSON: {"time", "ready", "live", "notReady": [...], "notLive": [...]},
// each check {"controller" or "kind", "reason"}.
type Health struct {
	Time  time.Time `json:"time"`
	Ready bool      `json:"ready"`
	Live  bool      `json:"live"`
	// NotReady and NotLive are the checks that fail, sorted by what they
	// are about (the Runtime itself first).
	NotReady []HealthCheck `json:"notReady,omitempty"`
	NotLive  []HealthCheck `json:"notLive,omitempty"`
}

// HealthCheck is one check that fails: about a controller, a watched kind
// ("type(namespace)"), or, with both empty, the Runtime itself.
type HealthCheck struct {
	Controller string `json:"controller,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Reason     string `json:"reason"`
}

// String says "controller NAME: reason", "kind TYPE(NS): reason" or
// "runtime: reason".
func (c HealthCheck) String() string {
	switch {
	case c.Controller != "":
		return "controller " + c.Controller + ": " + c.Reason
	case c.Kind != "":
		return "kind " + c.Kind + ": " + c.Reason
	}
	return "runtime: " + c.Reason
}

// ReadyText is the text /readyz serves: "ready", or "not ready" followed
// by one line per check that fails.
func (h Health) ReadyText() string { return healthText(h.Ready, "ready", "not ready", h.NotReady) }

// LiveText is the text /healthz serves: "live", or "not live" followed by
// one line per check that fails.
func (h Health) LiveText() string { return healthText(h.Live, "live", "not live", h.NotLive) }

func healthText(ok bool, yes, no string, checks []HealthCheck) string {
	if ok {
		return yes + "\n"
	}
	var b strings.Builder
	b.WriteString(no + "\n")
	for _, c := range checks {
		b.WriteString("  " + c.String() + "\n")
	}
	return b.String()
}

// HealthReporter is an optional interface of an [Observer] that tells
// whether its Runtime is ready and live (resgraph's Runtime's Observer
// implements it). Health computes it now; it is safe for concurrent use
// at any time, cheap enough to be asked every second (it reads each
// controller's status and each kind watch's progress, and asks the state
// nothing).
type HealthReporter interface {
	Health() Health
}

// HealthOf returns the health o tells, and false when o does not tell
// one (it is not a [HealthReporter]).
func HealthOf(o Observer) (Health, bool) {
	if hr, ok := o.(HealthReporter); ok && hr != nil {
		return hr.Health(), true
	}
	return Health{}, false
}
