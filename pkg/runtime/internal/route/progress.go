package route

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// progress is what a kind watch has routed, for the Runtime's activity report. The
// watch goroutine updates it once per batch.
type progress struct {
	mu sync.Mutex
	// The fields below are protected by mu.
	live     bool               // bootstrapped, and the watch is up
	routing  bool               // a batch was received and is being routed
	batches  uint64             // batches routed so far
	bookmark state.Bookmark     // bookmark of the last event routed
	ch       chan []state.Event // the current watch's channel
}

// received marks a batch received from the watch's channel.
func (p *progress) received() {
	p.mu.Lock()
	p.routing = true
	p.mu.Unlock()
}

// routed marks the batch received last as routed; live tells whether the
// watch has bootstrapped.
func (p *progress) routed(batch []state.Event, live bool) {
	var bm state.Bookmark
	for i := len(batch) - 1; i >= 0 && bm == nil; i-- {
		bm = batch[i].Bookmark
	}
	p.mu.Lock()
	p.routing = false
	p.live = live
	p.batches++
	if bm != nil {
		p.bookmark = bm
	}
	p.mu.Unlock()
}

// started records the channel of a new watch.
func (p *progress) started(ch chan []state.Event) {
	p.mu.Lock()
	p.ch = ch
	p.mu.Unlock()
}

// down marks the watch as failed (it is re-established with a re-list).
func (p *progress) down() {
	p.mu.Lock()
	p.live, p.routing, p.ch = false, false, nil
	p.mu.Unlock()
}

// KindActivity is whether one kind's watch is behind the state (see
// observe.KindActivity), and how many batches it has routed.
type KindActivity struct {
	Key    resource.KindKey
	Behind bool
	Exact  bool
	Why    string
	Routed uint64
}

// Activity reports, for every watched kind sorted by key, whether its watch
// is behind. running tells whether the Runtime runs (a stopped or not yet
// started Runtime routes nothing, so no kind is behind). With a state that
// reports its kind heads ([state.KindHeadReporter]), a kind is also behind
// while the state has changes its watch has not delivered; ctx bounds those
// calls.
func (r *Router) Activity(ctx context.Context, running bool) []KindActivity {
	heads, _ := r.cfg.State.(state.KindHeadReporter)
	watchers := r.watchers()
	out := make([]KindActivity, 0, len(watchers))
	for _, w := range watchers {
		ka := KindActivity{Key: w.key}
		var head state.Bookmark
		if heads != nil && running {
			if h, err := heads.KindHead(ctx, w.key); err == nil {
				head, ka.Exact = h, true
			}
		}
		p := &w.progress
		p.mu.Lock()
		switch {
		case !running:
			// A stopped (or not yet started) Runtime routes nothing.
		case !p.live && p.batches == 0:
			ka.Behind, ka.Why = true, "not bootstrapped yet"
		case !p.live:
			ka.Behind, ka.Why = true, "re-establishing the watch after a failure"
		case p.routing:
			ka.Behind, ka.Why = true, "routing a batch"
		case len(p.ch) > 0:
			ka.Behind, ka.Why = true, fmt.Sprintf("%d batches received, not yet routed", len(p.ch))
		case ka.Exact && !bytes.Equal(head, p.bookmark):
			ka.Behind, ka.Why = true, "the state has changes the watch has not delivered yet"
		}
		ka.Routed = p.batches
		p.mu.Unlock()
		out = append(out, ka)
	}
	return out
}
