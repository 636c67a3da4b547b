package sim

import (
	"slices"
)

// Observed returns what a world fake calls to read what name names (as
// the daemon's code named it for its flight recorder:
// recording.Recorder.Observe) in a run that reproduces a recording
// (Scenario.MatchRecording): the call waits until the run is where the
// recording noted its next read of name (after as many of its commits
// and ops), and returns the value recorded — the newest read the run is
// past, so that a read the replay's pass skipped, having committed
// nothing, is skipped too. Past the recording's last read it returns the
// last value. ok is false, at once, in any other run and when the
// recording holds no read of name: the fake then reads its own state.
func (w *World) Observed(name string) func() (value []byte, ok bool) {
	r := w.r
	return func() ([]byte, bool) {
		if !r.matching() {
			return nil, false
		}
		r.mu.Lock()
		n := len(r.reads[name])
		rw := &readWait{name: name, ch: make(chan []byte, 1)}
		if n > 0 {
			r.readWaits = append(r.readWaits, rw)
		}
		r.mu.Unlock()
		if n == 0 {
			return nil, false
		}
		r.ping()
		select {
		case v := <-rw.ch:
			return v, true
		case <-r.ctx.Done():
			return nil, false
		}
	}
}

// recordedRead is a world read of a recording: the value it returned,
// and where it was read: after how many of the recording's commits
// (outside writers' and controllers') and ops.
type recordedRead struct {
	value        []byte
	commits, ops int
}

// readWait is a world read waiting for its turn.
type readWait struct {
	name string
	ch   chan []byte
}

// readCandidates appends the world reads that wait; called on the loop.
func (r *run) readCandidates(out []candidate) []candidate {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rw := range r.readWaits {
		out = append(out, candidate{cat: catEngine, key: "0 read " + rw.name, text: "world read " + rw.name,
			actor: "world", read: rw.name, do: func() { r.releaseRead(rw) }})
	}
	return out
}

// readDue reports whether the next recorded read of name is due: the run
// made the commits and took the ops the recording has before it.
func (r *run) readDue(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	reads, k := r.reads[name], r.readNext[name]
	return k >= len(reads) || r.reachedLocked(reads[k])
}

func (r *run) reachedLocked(rr recordedRead) bool {
	return r.allCommits >= rr.commits && r.next >= rr.ops
}

// releaseRead hands the read rw its value: the newest recorded read of
// its name from the next one on that the run has reached (the next one
// when none is: the read was let go early), or the last.
func (r *run) releaseRead(rw *readWait) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.readWaits, rw)
	if i < 0 {
		return
	}
	r.readWaits = slices.Delete(r.readWaits, i, i+1)
	reads, k := r.reads[rw.name], r.readNext[rw.name]
	j := min(k, len(reads)-1)
	for j+1 < len(reads) && r.reachedLocked(reads[j+1]) {
		j++
	}
	if r.readNext == nil {
		r.readNext = map[string]int{}
	}
	r.readNext[rw.name] = max(k, j+1)
	r.eventLocked("world", "read "+rw.name+" as recorded")
	rw.ch <- reads[j].value
}
