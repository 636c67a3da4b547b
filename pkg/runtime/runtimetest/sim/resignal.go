package sim

import (
	"slices"
	"strings"
)

// resignalKey is the key of the step that signals the world's relays
// again (resignalCandidate).
const resignalKey = "5 signal again"

// resignalCandidate appends, in the run that reproduces a recording, the
// step that signals every relay of the world again (World.Relay), while
// a reader (World.Observed) has a recorded read not handed out yet and
// none of its reads waits: the recorded daemon's world may have signalled
// it more often than the replay's fakes do (a kernel signals each link
// the daemon creates, and the fake's signals coalesced where the real
// kernel's did not), and its reader then waits for a signal that never
// comes. The step is early (unheld leaves it out while anything else is
// left): the guide takes it when the reader waits and its read is what
// comes next (resignalFor), once for each read handed out. Called on the
// loop.
func (r *run) resignalCandidate(out []candidate) []candidate {
	if !r.matching() {
		return out
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.relays) == 0 {
		return out
	}
	var readers []string
	for name, by := range r.observers {
		k := r.readNext[name]
		if k >= len(r.reads[name]) || r.resignaled[name] == k+1 || slices.ContainsFunc(r.readWaits, func(rw *readWait) bool { return rw.name == name }) {
			continue
		}
		readers = append(readers, by)
	}
	if len(readers) == 0 {
		return out
	}
	slices.Sort(readers)
	relays := slices.Clone(r.relays)
	return append(out, candidate{cat: catEngine, key: resignalKey, text: "signal the world's relays again (" + strings.Join(slices.Compact(readers), ", ") + " read again when recorded)",
		actor: "Runtime", early: true, resignal: slices.Compact(readers), do: func() { r.resignal(relays) }})
}

// resignal signals each relay again (the notification is passed on as a
// signal of its source would be) and notes, for each reader with a read
// not handed out, that its read was signalled for.
func (r *run) resignal(relays []*relay) {
	r.mu.Lock()
	for name := range r.observers {
		if k := r.readNext[name]; k < len(r.reads[name]) {
			if r.resignaled == nil {
				r.resignaled = map[string]int{}
			}
			r.resignaled[name] = k + 1
		}
	}
	r.mu.Unlock()
	for _, rl := range relays {
		select {
		case rl.out <- struct{}{}:
		default:
		}
	}
}

// resignalFor returns the step that signals the world's relays again, when
// it is among cands for reader by and by waits (no step of by is among
// cands: its pass ended, and it waits for a signal).
func resignalFor(cands []candidate, by string) (candidate, bool) {
	i := slices.IndexFunc(cands, func(c candidate) bool { return c.key == resignalKey && slices.Contains(c.resignal, by) })
	if i < 0 || slices.ContainsFunc(cands, func(c candidate) bool { return c.actor == by }) {
		return candidate{}, false
	}
	return cands[i], true
}

// withoutResignal returns cands without the step that signals the
// world's relays again, unless it is the only one.
func withoutResignal(cands []candidate) []candidate {
	i := slices.IndexFunc(cands, func(c candidate) bool { return c.key == resignalKey })
	if i < 0 || len(cands) == 1 {
		return cands
	}
	return slices.Delete(slices.Clone(cands), i, i+1)
}
