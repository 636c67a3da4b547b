package sim

import (
	"fmt"
	"slices"
)

// Observed returns what a world fake calls to read what name names (as
// the daemon's code named it for its flight recorder:
// recording.Recorder.Observe), read by the passes of controller by, in a
// run that reproduces a recording (Scenario.MatchRecording): the call
// returns the value of the recorded read that by's next recorded commit
// came from (the newest read of name before that commit; the last one
// when by commits nothing more), once the run is where the recording
// noted it (after as many of its commits and ops): a read of the replay
// that comes early waits, and reads that made no commit in the recording
// are passed over. ok is false, at once, in any other run and when the
// recording holds no read of name: the fake then reads its own state.
func (w *World) Observed(name, by string) func() (value []byte, ok bool) {
	r := w.r
	r.mu.Lock()
	if r.observers == nil {
		r.observers = map[string]string{}
	}
	r.observers[name] = by
	r.mu.Unlock()
	return func() ([]byte, bool) {
		if !r.matching() {
			return nil, false
		}
		r.mu.Lock()
		n := len(r.reads[name])
		rw := &readWait{name: name, by: by, ch: make(chan []byte, 1)}
		if n > 0 {
			r.readWaits = append(r.readWaits, rw)
			if r.readers == nil {
				r.readers = map[string]string{}
			}
			r.readers[name] = by
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
	name, by string
	ch       chan []byte
}

// readCandidates appends the world reads that wait; called on the loop.
func (r *run) readCandidates(out []candidate) []candidate {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rw := range r.readWaits {
		out = append(out, candidate{cat: catEngine, key: "0 read " + rw.name + " " + rw.by, text: "world read " + rw.name + " by " + rw.by,
			actor: rw.by, read: rw, do: func() { r.releaseRead(rw) }})
	}
	return out
}

// readFor returns the index of the recorded read of rw's name that
// rw is to return: the newest before its reader's next recorded commit
// (the last when it commits nothing more), and none before the next
// read not yet handed out; -1 when the recording holds none. Called
// with r.mu held.
func (r *run) readForLocked(rw *readWait) int {
	reads, k := r.reads[rw.name], r.readNext[rw.name]
	if len(reads) == 0 {
		return -1
	}
	at := -1 // where the reader's next commit is
	for _, w := range r.writers[min(r.controllerCommits, len(r.writers)):] {
		if w.writer == rw.by {
			at = w.at
			break
		}
	}
	j := min(k, len(reads)-1)
	for j+1 < len(reads) && (at < 0 || reads[j+1].commits <= at) {
		j++
	}
	return j
}

// readDue reports whether read rw may be handed its value: the run made
// the commits and took the ops the recording has before it.
func (r *run) readDue(rw *readWait) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.readForLocked(rw)
	return j < 0 || r.reachedLocked(r.reads[rw.name][j])
}

func (r *run) reachedLocked(rr recordedRead) bool {
	return r.allCommits >= rr.commits && r.next >= rr.ops
}

// releaseRead hands the read rw its value (readFor).
func (r *run) releaseRead(rw *readWait) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.readWaits, rw)
	if i < 0 {
		return
	}
	r.readWaits = slices.Delete(r.readWaits, i, i+1)
	j := r.readForLocked(rw)
	if r.readNext == nil {
		r.readNext = map[string]int{}
	}
	r.readNext[rw.name] = max(r.readNext[rw.name], j+1)
	r.eventLocked("world", fmt.Sprintf("%s reads %s as recorded (read %d of %d)", rw.by, rw.name, j+1, len(r.reads[rw.name])))
	rw.ch <- r.reads[rw.name][j].value
}
