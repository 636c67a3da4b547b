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
	s := &shrinker{x: x, check: o.failure.Check, best: o, deadline: time.Now().Add(budget)}
	for progress := true; progress && s.left(); {
		ops := s.dropOps()
		faults := s.dropFaults()
		sched := x.shrinkTape(s.best.plan.sched, func(t []uint32) bool {
			p := s.best.plan
			p.sched = t
			return s.try(p)
		})
		progress = ops || faults || sched
	}
	return s.best
}

// shrinker is one shrinking: the check the runs must fail, the smallest
// failing run so far, and the budget.
type shrinker struct {
	x        *explorer
	check    string
	best     *outcome
	deadline time.Time
	runs     int
}

// left reports whether the budget allows another run.
func (s *shrinker) left() bool { return s.runs < shrinkRuns && time.Now().Before(s.deadline) }

// try runs p and keeps it when it fails the same check and is smaller.
func (s *shrinker) try(p plan) bool {
	if !s.left() {
		return false
	}
	s.runs++
	c := s.x.evaluate(p)
	if c.failure != nil && c.failure.Check == s.check && smaller(c, s.best) {
		s.best = c
		return true
	}
	return false
}

// dropOps drops workload ops, halves first, then smaller chunks.
func (s *shrinker) dropOps() (progress bool) {
	keep := s.best.plan.keep
	if keep == nil {
		keep = make([]int, s.best.ops)
		for i := range keep {
			keep[i] = i
		}
	}
	for chunk := max(len(keep)/2, 1); chunk >= 1 && len(keep) > 0; chunk /= 2 {
		for i := 0; i+chunk <= len(keep); {
			p := s.best.plan
			p.keep = slices.Concat(keep[:i], keep[i+chunk:])
			if p.keep == nil {
				p.keep = []int{}
			}
			if s.try(p) {
				keep, progress = s.best.plan.keep, true
				continue
			}
			i += chunk
		}
	}
	return progress
}

// dropFaults drops the faults: all at once, then one by one (the writes',
// then the steps').
func (s *shrinker) dropFaults() (progress bool) {
	if anyNonZero(s.best.plan.faults) || len(s.best.plan.writeFaults) > 0 {
		p := s.best.plan
		p.faults, p.writeFaults = nil, nil
		progress = s.try(p)
	}
	for _, key := range slices.Sorted(maps.Keys(s.best.plan.writeFaults)) {
		p := s.best.plan
		p.writeFaults = maps.Clone(p.writeFaults)
		delete(p.writeFaults, key)
		progress = s.try(p) || progress
	}
	for i := 0; i < len(s.best.plan.faults); i++ {
		if s.best.plan.faults[i] == 0 {
			continue
		}
		p := s.best.plan
		p.faults = slices.Clone(p.faults)
		p.faults[i] = 0
		progress = s.try(p) || progress
	}
	return progress
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
