package route

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

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
	// For the Runtime's health: when the batch being routed was
	// received, when the last one was routed (or the watch started), and
	// since when the watch has been down and why (zero while it is up).
	receivedAt, routedAt time.Time
	downSince            time.Time
	downWhy              string
}

// received marks a batch received from the watch's channel.
func (p *progress) received() {
	now := time.Now()
	p.mu.Lock()
	p.routing, p.receivedAt = true, now
	p.mu.Unlock()
}

// routed marks the batch received last as routed; live tells whether the
// watch has bootstrapped.
func (p *progress) routed(batch []state.Event, live bool) {
	var bm state.Bookmark
	for i := len(batch) - 1; i >= 0 && bm == nil; i-- {
		bm = batch[i].Bookmark
	}
	now := time.Now()
	p.mu.Lock()
	p.routing, p.routedAt = false, now
	p.live = live
	p.batches++
	if bm != nil {
		p.bookmark = bm
	}
	p.mu.Unlock()
}

// started records the channel of a new watch: the watch is up.
func (p *progress) started(ch chan []state.Event) {
	now := time.Now()
	p.mu.Lock()
	p.ch, p.routedAt, p.downSince, p.downWhy = ch, now, time.Time{}, ""
	p.mu.Unlock()
}

// resumed marks a watch resumed from a bookmark as live: it has no
// bootstrap to route first.
func (p *progress) resumed() {
	p.mu.Lock()
	p.live = true
	p.mu.Unlock()
}

// down marks the watch as failed (it is re-established with a re-list).
func (p *progress) down() {
	p.mu.Lock()
	p.live, p.routing, p.ch = false, false, nil
	p.mu.Unlock()
}

// failed records why the watch is down, from when it first went down.
func (p *progress) failed(why string) {
	now := time.Now()
	p.mu.Lock()
	if p.downSince.IsZero() {
		p.downSince = now
	}
	p.downWhy = why
	p.mu.Unlock()
}

// KindHealth is a watched kind whose watch is not moving (see
// [Router.Health]).
type KindHealth struct {
	Key    resource.KindKey
	Reason string
}

// Health returns, sorted by kind, the kinds whose watch has not moved for
// longer than bound at now: down (failed and not re-established), routing
// one batch, or with batches received that it does not route.
func (r *Router) Health(now time.Time, bound time.Duration) []KindHealth {
	var out []KindHealth
	for _, w := range r.watchers() {
		if why := w.progress.stalled(now, bound); why != "" {
			out = append(out, KindHealth{Key: w.key, Reason: why})
		}
	}
	return out
}

// stalled says why the watch has not moved for longer than bound ("" when
// it has).
func (p *progress) stalled(now time.Time, bound time.Duration) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	late := func(t time.Time) bool { return !t.IsZero() && now.Sub(t) > bound }
	since := func(t time.Time) string { return now.Sub(t).Round(time.Millisecond).String() }
	switch {
	case late(p.downSince):
		return "its watch has been down for " + since(p.downSince) + ": " + p.downWhy
	case p.routing && late(p.receivedAt):
		return "routing one batch for " + since(p.receivedAt)
	case !p.routing && len(p.ch) > 0 && late(p.routedAt):
		return fmt.Sprintf("the router stopped draining its watch: %d batches received, none routed for %s", len(p.ch), since(p.routedAt))
	}
	return ""
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
