package remote

import (
	"context"

	"github.com/resgraph/resgraph/pkg/observe"
)

// RuntimeHealth returns the health function of a Runtime's observer (rule
// OB6), to serve with [WithHealth]:
//
//	remote.NewServer(rt.Observe(), remote.WithHealth(remote.RuntimeHealth(rt.Observe())))
//
// Its checks are the Runtime's health (observe.HealthOf), named as
// observe.HealthCheck names them: readiness has a check "runtime" and,
// while the Runtime runs, one check "controller NAME" per controller —
// passing, or failing with the reason the Runtime gives (catching up with
// the first listing of its inputs, its leadership role unknown, ...);
// liveness has a check "runtime" and one failing check per controller or
// kind ("kind TYPE(NS)") the Runtime says is not moving. A probe passes
// exactly when the Runtime says it is ready (live). It returns nil — no
// health served — when o tells no health (it is not an
// observe.HealthReporter).
func RuntimeHealth(o observe.Observer) HealthFunc {
	hr, ok := o.(observe.HealthReporter)
	if !ok || hr == nil {
		return nil
	}
	return func(context.Context) []Check {
		return runtimeChecks(hr.Health(), o.Controllers())
	}
}

// runtimeChecks turns a Runtime's health and its controllers' statuses
// into checks, as [RuntimeHealth] serves them.
func runtimeChecks(h observe.Health, controllers []observe.ControllerStatus) []Check {
	checks := make([]Check, 0, len(controllers)+len(h.NotReady)+len(h.NotLive)+2)
	checks = append(checks, runtimeCheck(Readiness, h.Ready, "ready", "not ready", h.NotReady))
	if checks[0].OK || !hasRuntimeCheck(h.NotReady) {
		failing := byController(h.NotReady)
		for _, c := range controllers {
			reasons, ok := failing[c.Name]
			if !ok {
				checks = append(checks, Check{Probe: Readiness, Name: "controller " + c.Name, OK: true,
					Message: "started, caught up with the first listing of its inputs, knows its leadership role"})
				continue
			}
			for _, r := range reasons {
				checks = append(checks, Check{Probe: Readiness, Name: "controller " + c.Name, Message: r})
			}
			delete(failing, c.Name)
		}
		checks = appendOthers(checks, Readiness, h.NotReady, failing)
	}
	checks = append(checks, runtimeCheck(Liveness, h.Live, "live: its loops are moving", "not live", h.NotLive))
	return appendOthers(checks, Liveness, h.NotLive, byController(h.NotLive))
}

// runtimeCheck is the probe's check "runtime": failing with the reasons
// about the Runtime itself, or with "not ready"/"not live" when only other
// checks fail.
func runtimeCheck(p Probe, ok bool, yes, no string, failing []observe.HealthCheck) Check {
	c := Check{Probe: p, Name: "runtime", OK: ok, Message: yes}
	if ok {
		return c
	}
	c.Message = ""
	for _, f := range failing {
		if f.Controller == "" && f.Kind == "" {
			if c.Message != "" {
				c.Message += "; "
			}
			c.Message += f.Reason
		}
	}
	if c.Message == "" {
		c.Message = no + ": see the failing checks"
	}
	return c
}

func hasRuntimeCheck(cs []observe.HealthCheck) bool {
	for _, c := range cs {
		if c.Controller == "" && c.Kind == "" {
			return true
		}
	}
	return false
}

// byController groups the failing checks about controllers by name.
func byController(cs []observe.HealthCheck) map[string][]string {
	m := make(map[string][]string)
	for _, c := range cs {
		if c.Controller != "" {
			m[c.Controller] = append(m[c.Controller], c.Reason)
		}
	}
	return m
}

// appendOthers appends the failing checks of cs about kinds, and those
// about the controllers still in left (not among the statuses), in cs's
// order.
func appendOthers(checks []Check, p Probe, cs []observe.HealthCheck, left map[string][]string) []Check {
	for _, c := range cs {
		switch {
		case c.Kind != "":
			checks = append(checks, Check{Probe: p, Name: "kind " + c.Kind, Message: c.Reason})
		case c.Controller != "":
			if _, ok := left[c.Controller]; ok {
				checks = append(checks, Check{Probe: p, Name: "controller " + c.Controller, Message: c.Reason})
			}
		}
	}
	return checks
}
