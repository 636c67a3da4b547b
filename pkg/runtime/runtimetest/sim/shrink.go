package sim

import (
	"maps"
	"slices"
	"time"
)

// shrinkRuns bounds the runs of one shrinking.
const shrinkRuns = 400

// size orders runs from simplest: fewest workload ops, then fewest
// faults, then fewest steps, then the simplest tapes.
func size(o *outcome) [5]int {
	nz, sum := 0, 0
	for _, v := range o.plan.sched {
		if v != 0 {
			nz++
			sum += int(v)
		}
	}
	return [5]int{o.ops, o.faults, o.steps, nz, sum}
}

func smaller(a, b *outcome) bool {
	sa, sb := size(a), size(b)
	return slices.Compare(sa[:], sb[:]) < 0
}

// shrink returns the smallest run it finds that fails like o (the same
// check), within budget: it drops workload ops (halves, then smaller
// chunks), then faults, then schedule decisions (a shorter tape, zeros:
// the first candidate of a step, as the reference run takes it), until
// nothing drops.
func (x *explorer) shrink(o *outcome, budget time.Duration) *outcome {
	check := o.failure.Check
	best := o
	deadline := time.Now().Add(budget)
	runs := 0
	try := func(p plan) bool {
		if runs >= shrinkRuns || time.Now().After(deadline) {
			return false
		}
		runs++
		c := x.evaluate(p)
		if c.failure != nil && c.failure.Check == check && smaller(c, best) {
			best = c
			return true
		}
		return false
	}
	for progress := true; progress && runs < shrinkRuns && time.Now().Before(deadline); {
		progress = false
		// Workload ops.
		keep := best.plan.keep
		if keep == nil {
			keep = make([]int, best.ops)
			for i := range keep {
				keep[i] = i
			}
		}
		for chunk := max(len(keep)/2, 1); chunk >= 1 && len(keep) > 0; chunk /= 2 {
			for i := 0; i+chunk <= len(keep); {
				p := best.plan
				p.keep = slices.Concat(keep[:i], keep[i+chunk:])
				if p.keep == nil {
					p.keep = []int{}
				}
				if try(p) {
					keep, progress = best.plan.keep, true
					continue
				}
				i += chunk
			}
		}
		// Faults: all at once, then one by one (writes', then steps').
		if anyNonZero(best.plan.faults) || len(best.plan.writeFaults) > 0 {
			p := best.plan
			p.faults, p.writeFaults = nil, nil
			if try(p) {
				progress = true
			}
		}
		for _, key := range slices.Sorted(maps.Keys(best.plan.writeFaults)) {
			p := best.plan
			p.writeFaults = maps.Clone(p.writeFaults)
			delete(p.writeFaults, key)
			if try(p) {
				progress = true
			}
		}
		for i := 0; i < len(best.plan.faults); i++ {
			if best.plan.faults[i] == 0 {
				continue
			}
			p := best.plan
			p.faults = slices.Clone(p.faults)
			p.faults[i] = 0
			if try(p) {
				progress = true
			}
		}
		// Schedule: shorter tapes, then zeros, then smaller decisions.
		if x.shrinkTape(best.plan.sched, func(t []uint32) bool {
			p := best.plan
			p.sched = t
			return try(p)
		}) {
			progress = true
		}
	}
	return best
}

// shrinkTape tries simpler versions of tape with try (which reports
// whether one was taken; the next tries start from the tape it took) and
// reports whether one was.
func (x *explorer) shrinkTape(tape []uint32, try func([]uint32) bool) bool {
	took := false
	cur := tape
	attempt := func(t []uint32) bool {
		if try(t) {
			cur, took = t, true
			return true
		}
		return false
	}
	if len(cur) > 0 && attempt(nil) {
		return true
	}
	for cut := len(cur) / 2; cut >= 1; cut /= 2 {
		for len(cur) >= cut && attempt(slices.Clone(cur[:len(cur)-cut])) {
		}
	}
	for chunk := max(len(cur)/2, 1); chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(cur); i += chunk {
			if !anyNonZero(cur[i : i+chunk]) {
				continue
			}
			t := slices.Clone(cur)
			clear(t[i : i+chunk])
			attempt(t)
		}
	}
	for i := range cur {
		if cur[i] > 1 {
			t := slices.Clone(cur)
			t[i] /= 2
			attempt(t)
		}
	}
	return took
}

func anyNonZero(t []uint32) bool {
	return slices.ContainsFunc(t, func(v uint32) bool { return v != 0 })
}
