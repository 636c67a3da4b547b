package sim

import (
	"fmt"
	"strings"
)

// Nondeterminism is what a simulation reports with a failure that is not
// reproducible: the seed's run, run again, does not give the same
// transcript (it passes, fails another way, or reaches its
// failure by other steps), or the shrunk run's token replays clean. The
// same plan must give the same trace, step by step; when it does not,
// user code depends on something the simulator does not control — Go's
// map order, the wall clock, a goroutine of its own, global state — and
// the failure cannot be shrunk or replayed. The first step at which two
// runs differ points at it.
type Nondeterminism struct {
	// Why says how it showed: "the seed did not fail again", "the seed
	// failed again by other steps", "the reference run differs from
	// itself", or "the shrunk run replays clean".
	Why string
	// Step is the step at which the two runs first differ; First and
	// Second are their transcript entries there ("(the run ended)" past
	// a run's end).
	Step          int
	First, Second string
}

// String is the report's account of it.
func (n *Nondeterminism) String() string {
	return fmt.Sprintf("nondeterministic user code: %s; two runs of the same plan first differ at step %d:\n  first run:  %s\n  second run: %s",
		n.Why, n.Step, n.First, n.Second)
}

// divergence returns where the transcripts a and b first differ, nil when
// they are the same.
func divergence(why string, a, b Transcript) *Nondeterminism {
	const ended = "(the run ended)"
	for i := 0; i < max(len(a), len(b)); i++ {
		switch {
		case i >= len(a):
			return &Nondeterminism{Why: why, Step: b[i].Step, First: ended, Second: b[i].String()}
		case i >= len(b):
			return &Nondeterminism{Why: why, Step: a[i].Step, First: a[i].String(), Second: ended}
		case a[i] != b[i]:
			return &Nondeterminism{Why: why, Step: min(a[i].Step, b[i].Step), First: a[i].String(), Second: b[i].String()}
		}
	}
	return nil
}

// recheck runs the failing seed's run o again, and its reference run,
// and reports the nondeterminism their transcripts show, if any.
func (x *explorer) recheck(o *outcome) *Nondeterminism {
	if !x.sc.NoReference {
		if ref := x.reference(o.plan); ref != nil {
			x.runs++
			again := execute(x.t, x.sc, plan{seed: ref.plan.seed, keep: ref.plan.keep, noFaults: true})
			if d := divergence("the reference run differs from itself", ref.transcript, again.transcript); d != nil {
				return d
			}
		}
	}
	if o.plan.noFaults {
		return nil // the reference run failed: rerun above
	}
	again := x.evaluate(plan{seed: o.plan.seed, keep: o.plan.keep, explore: true})
	why := "the seed failed again by other steps"
	switch {
	case again.failure == nil:
		why = "the seed did not fail again"
	case again.failure.Check != o.failure.Check:
		why = fmt.Sprintf("the seed failed again, another way (%s)", again.failure)
	}
	if d := divergence(why, o.transcript, again.transcript); d != nil {
		return d
	}
	if again.failure == nil || again.failure.Check != o.failure.Check {
		// The same steps, another outcome: the checks themselves differ.
		return &Nondeterminism{Why: why, Step: o.steps, First: o.failure.String(), Second: outcomeText(again)}
	}
	return nil
}

// replayClean replays the shrunk run's token and reports the
// nondeterminism when it does not fail the same way.
func (x *explorer) replayClean(s *outcome) *Nondeterminism {
	p, err := decodeToken(s.token)
	if err != nil {
		return nil
	}
	again := x.evaluate(p)
	if again.failure != nil && again.failure.Check == s.failure.Check {
		return nil
	}
	if d := divergence("the shrunk run replays clean", s.transcript, again.transcript); d != nil {
		return d
	}
	return &Nondeterminism{Why: "the shrunk run replays clean", Step: s.steps, First: s.failure.String(), Second: outcomeText(again)}
}

// outcomeText says how a run ended.
func outcomeText(o *outcome) string {
	if o.failure == nil {
		return "passed"
	}
	return strings.TrimSpace(o.failure.String())
}
