package debughttp

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// traceQuery is a parsed /debug/trace query.
type traceQuery struct {
	filter trace.Filter
	// typ selects events about resources of this type (or caused by
	// their changes).
	typ    string
	since  uint64
	limit  int
	follow bool
	// sub, when set, is the request's subject: records about resources
	// of sensitive types it is not granted are left out (rule A2).
	sub *access.Subject
	ctx context.Context
}

// parseTraceQuery reads the query parameters of /debug/trace: controller,
// resource (NS/TYPE/ID), type (a resource type), event (event types,
// comma-separated), since (a sequence number), limit (the newest N),
// follow (stream).
func parseTraceQuery(r *http.Request) (traceQuery, error) {
	q := r.URL.Query()
	tq := traceQuery{sub: access.FromContext(r.Context()), ctx: r.Context()}
	tq.filter.Controller = q.Get("controller")
	tq.typ = q.Get("type")
	if s := q.Get("resource"); s != "" {
		ref, err := explain.ParseResource(s)
		if err != nil {
			return tq, err
		}
		tq.filter.Resource = ref
	}
	if s := q.Get("event"); s != "" {
		for name := range strings.SplitSeq(s, ",") {
			t, err := trace.ParseType(strings.TrimSpace(name))
			if err != nil {
				return tq, err
			}
			tq.filter.Types = append(tq.filter.Types, t)
		}
	}
	for _, p := range []struct {
		name string
		dst  func(uint64)
	}{
		{"since", func(v uint64) { tq.since = v }},
		{"limit", func(v uint64) { tq.limit = int(min(v, 1<<31)) }},
	} {
		if s := q.Get(p.name); s != "" {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return tq, fmt.Errorf("%s=%q: want a non-negative integer", p.name, s)
			}
			p.dst(v)
		}
	}
	switch f := q.Get("follow"); f {
	case "", "0", "false":
	case "1", "true":
		tq.follow = true
	default:
		return tq, fmt.Errorf("follow=%q: want 1 or 0", f)
	}
	return tq, nil
}

func (tq *traceQuery) match(e *trace.Record) bool {
	if e.Seq <= tq.since && e.Type != trace.Lost {
		return false
	}
	if tq.typ != "" && e.Resource.Type != tq.typ && e.Cause.Type != tq.typ {
		return false
	}
	if tq.sub != nil && !tq.sub.VisibleRecord(tq.ctx, e) {
		return false
	}
	return e.Type == trace.Lost || tq.filter.Match(e)
}

// tracePage serves /debug/trace: the Runtime's trace as JSON lines, oldest
// first (see parseTraceQuery for the filters); with follow=1 it streams
// new events as they come until the client goes away.
type tracePage struct{ obs observe.Observer }

func (p tracePage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tq, err := parseTraceQuery(r)
	if err != nil {
		http.Error(w, "trace: "+err.Error(), http.StatusBadRequest)
		return
	}
	ring := p.obs.Trace()
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if ring == nil {
		w.Header().Set("X-Resgraph-Trace", "off")
	}
	if tq.follow {
		p.follow(w, r, ring, &tq)
		return
	}
	evs, _ := ring.Since(tq.since, nil)
	out := evs[:0]
	for i := range evs {
		if tq.match(&evs[i]) {
			out = append(out, evs[i])
		}
	}
	if tq.limit > 0 && len(out) > tq.limit {
		out = out[len(out)-tq.limit:]
	}
	_ = trace.WriteJSONLines(w, out)
}

// follow streams the events after tq.since (or from the newest on) until
// the request ends.
func (p tracePage) follow(w http.ResponseWriter, r *http.Request, ring *trace.Ring, tq *traceQuery) {
	f := ring.Follow(false)
	if tq.since > 0 {
		f = ring.Follow(true)
	}
	flusher, _ := w.(http.Flusher)
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	var buf, out []trace.Record
	for {
		var err error
		if buf, err = f.Next(r.Context(), buf[:0]); err != nil {
			return
		}
		out = out[:0]
		for i := range buf {
			if tq.match(&buf[i]) {
				out = append(out, buf[i])
			}
		}
		if len(out) == 0 {
			continue
		}
		if trace.WriteJSONLines(w, out) != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}
