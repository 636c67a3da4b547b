package sim

import "math/rand/v2"

// stream is one stream of a run's decisions (the schedule's, or the
// faults'). Exploring, it draws each decision from a generator seeded by
// the run's seed and records it on its tape; replaying, it reads them back
// from a tape, and past the tape's end takes 0 — the first candidate, no
// fault. Shrinking edits tapes: a shorter tape, or more zeros, is a
// simpler run. A decision is taken (and recorded) only where there is a
// choice, which depends only on the decisions before it: a tape means the
// same run on every replay.
type stream struct {
	rng  *rand.Rand // nil when replaying
	tape []uint32
	pos  int
}

func newStream(seed, salt uint64) *stream {
	return &stream{rng: rand.New(rand.NewPCG(seed, salt))}
}

func replayStream(tape []uint32) *stream { return &stream{tape: tape} }

// next returns the recorded decision for a choice among n (n > 1), or
// draws it with draw and records it.
func (s *stream) next(n int, draw func(*rand.Rand) int) int {
	if s.rng != nil {
		v := draw(s.rng)
		s.tape = append(s.tape, uint32(v))
		return v
	}
	v := 0
	if s.pos < len(s.tape) {
		v = min(int(s.tape[s.pos]), n-1)
	}
	s.pos++
	return v
}

// pick chooses uniformly among n (0 when n <= 1, recording nothing).
func (s *stream) pick(n int) int {
	if n <= 1 {
		return 0
	}
	return s.next(n, func(r *rand.Rand) int { return r.IntN(n) })
}

// weighted chooses among len(ws) by weight (0 when there is one choice).
func (s *stream) weighted(ws []int) int {
	if len(ws) <= 1 {
		return 0
	}
	return s.next(len(ws), func(r *rand.Rand) int {
		total := 0
		for _, w := range ws {
			total += w
		}
		n := r.IntN(total)
		for i, w := range ws {
			if n < w {
				return i
			}
			n -= w
		}
		return len(ws) - 1
	})
}

// fault decides whether one of kinds happens at a point where each has
// its rate: noFault, or the kind.
func (s *stream) fault(f Faults, kinds []faultKind) faultKind {
	v := s.next(len(kinds)+1, func(r *rand.Rand) int {
		u := r.Float64()
		for i, k := range kinds {
			if u < f.rate(k) {
				return i + 1
			}
			u -= f.rate(k)
		}
		return 0
	})
	if v == 0 {
		return noFault
	}
	k := kinds[v-1]
	if f.rate(k) == 0 { // a tape edited or replayed against other rates
		return noFault
	}
	return k
}

// decisions returns the tape as far as it was used.
func (s *stream) decisions() []uint32 {
	if s.rng != nil {
		return s.tape
	}
	return s.tape[:min(s.pos, len(s.tape))]
}
