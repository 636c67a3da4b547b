package debughttp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// fakeObserver serves the trace and explain pages from fixed data, so
// that the pages' parsing, filtering and rendering are tested on their
// own (the Runtime's side is tested with a real Runtime in the runtime and
// the demo).
type fakeObserver struct {
	ring *trace.Ring
}

var tNow = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

var _ observe.Observer = fakeObserver{}

func (fakeObserver) Controllers() []observe.ControllerStatus {
	return []observe.ControllerStatus{{Name: "A<b>", Family: observe.FamilyController, Lifecycle: observe.LifecycleRunning}}
}

func (f fakeObserver) Metrics() observe.Metrics {
	return observe.Metrics{Controllers: f.Controllers(), Kinds: []observe.KindMetrics{}, HotLoops: []observe.HotLoop{}}
}

func (fakeObserver) HotLoops() []observe.HotLoop { return nil }

func (fakeObserver) Activity(context.Context) observe.Activity { return observe.Activity{} }

func (fakeObserver) Graph() (*controller.DependencyGraph, error) {
	return &controller.DependencyGraph{}, nil
}

func (f fakeObserver) Trace() *trace.Ring { return f.ring }

func (fakeObserver) Explain(_ context.Context, p resource.Pointer) (explain.Resource, error) {
	if p.ID() == "missing-kind" {
		return explain.Resource{}, state.NewInvalidError(nil, "no controller declares %s", p.Type())
	}
	return explain.Resource{Time: tNow, Resource: trace.Ref{Namespace: p.Namespace(), Type: p.Type(), ID: p.ID()},
		Writers: []explain.Edge{}, Readers: []explain.Edge{}, Changes: []explain.Change{}, Controllers: []explain.ControllerDoing{}}, nil
}

func (fakeObserver) ExplainController(_ context.Context, name string) (explain.Controller, error) {
	if name != "A<b>" {
		return explain.Controller{}, state.NewNotFoundError(nil, "no controller %q", name)
	}
	return explain.Controller{Time: tNow, Name: name, Family: "controller", Doing: explain.Doing{Work: explain.WorkIdle},
		Inputs: []explain.Input{}, Outputs: []explain.Output{}, Recent: []explain.Reconcile{}}, nil
}

// serveObserved serves the trace and explain pages of obs on a test
// server and returns its URL.
func serveObserved(t *testing.T, obs observe.Observer) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/debug/trace", tracePage{obs: obs})
	mux.Handle("/debug/explain", explainPage{obs: obs})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func fetch(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func seqsOf(t *testing.T, body string) []uint64 {
	t.Helper()
	evs, err := trace.ReadJSONLines(strings.NewReader(body))
	require.NoError(t, err)
	out := []uint64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func filledRing() *trace.Ring {
	r := trace.NewRing(16)
	x := trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: 1}
	y := trace.Ref{Namespace: "ns", Type: "Y", ID: "y"}
	r.Add(&trace.Record{Time: tNow, Type: trace.Commit, Controller: "A", Op: "update", Resource: x})     // 1
	r.Add(&trace.Record{Time: tNow, Type: trace.Route, Controller: "B", Op: "updated", Resource: x})     // 2
	r.Add(&trace.Record{Time: tNow, Type: trace.ReconcileStart, Controller: "B", Resource: y, Cause: x}) // 3
	r.Add(&trace.Record{Time: tNow, Type: trace.ReconcileEnd, Controller: "B", Resource: y})             // 4
	r.Add(&trace.Record{Time: tNow, Type: trace.Commit, Controller: "B", Op: "update", Resource: y})     // 5
	return r
}

func TestTracePageFilters(t *testing.T) {
	base := serveObserved(t, fakeObserver{ring: filledRing()})
	resp, body := fetch(t, base+"/debug/trace")
	assert.Equal(t, "application/x-ndjson; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, []uint64{1, 2, 3, 4, 5}, seqsOf(t, body))
	for query, want := range map[string][]uint64{
		"controller=B":                         {2, 3, 4, 5},
		"resource=ns/X/x":                      {1, 2, 3},
		"type=Y":                               {3, 4, 5},
		"event=commit,route":                   {1, 2, 5},
		"since=3":                              {4, 5},
		"limit=2":                              {4, 5},
		"controller=B&event=commit":            {5},
		"controller=nobody":                    {},
		"resource=ns/X/x&event=commit&since=0": {1},
	} {
		_, body := fetch(t, base+"/debug/trace?"+query)
		assert.Equal(t, want, seqsOf(t, body), query)
	}
	for _, bad := range []string{"resource=nope", "event=nope", "since=-1", "limit=x", "follow=maybe"} {
		resp, body := fetch(t, base+"/debug/trace?"+bad)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, bad)
		assert.Contains(t, body, "trace: ", bad)
	}

	off := serveObserved(t, fakeObserver{})
	resp, body = fetch(t, off+"/debug/trace")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "off", resp.Header.Get("X-Resgraph-Trace"))
	assert.Empty(t, body)
}

// TestTracePageFollowStreams reads a follow=1 stream line by line while
// events are added, then goes away: the handler returns.
func TestTracePageFollowStreams(t *testing.T) {
	ring := trace.NewRing(16)
	base := serveObserved(t, fakeObserver{ring: ring})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/debug/trace?follow=1&controller=B", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "headers are flushed before any event")
	lines := bufio.NewScanner(resp.Body)
	for i := range 3 {
		ring.Add(&trace.Record{Type: trace.Commit, Controller: "A"}) // filtered out
		ring.Add(&trace.Record{Type: trace.Commit, Controller: "B", Attempt: uint32(i)})
		require.True(t, lines.Scan())
		var e trace.Record
		require.NoError(t, json.Unmarshal(lines.Bytes(), &e))
		assert.Equal(t, "B", e.Controller)
		assert.Equal(t, uint32(i), e.Attempt)
	}
}

func TestExplainPageFormatsAndErrors(t *testing.T) {
	base := serveObserved(t, fakeObserver{})
	resp, body := fetch(t, base+"/debug/explain?controller=A%3Cb%3E")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(body, "<!DOCTYPE html>"))
	assert.Contains(t, body, "A&lt;b&gt;")

	resp, body = fetch(t, base+"/debug/explain?controller=A%3Cb%3E&format=json")
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var c explain.Controller
	require.NoError(t, json.Unmarshal([]byte(body), &c))
	assert.Equal(t, "A<b>", c.Name)
	assert.Equal(t, explain.WorkIdle, c.Doing.Work)

	_, body = fetch(t, base+"/debug/explain?resource=ns/X/a/b&format=text")
	assert.True(t, strings.HasPrefix(body, "resource X(ns/a/b)\n"), body)
	_, body = fetch(t, base+"/debug/explain?resource=ns/X/x&format=fragment")
	assert.True(t, strings.HasPrefix(body, `<div class="explain" data-explain="resource">`), body)

	for query, code := range map[string]int{
		"controller=nobody":              http.StatusNotFound,
		"resource=ns/X/missing-kind":     http.StatusBadRequest,
		"resource=bad":                   http.StatusBadRequest,
		"resource=ns/X/x&controller=A":   http.StatusBadRequest,
		"controller=A%3Cb%3E&format=pdf": http.StatusBadRequest,
	} {
		resp, _ := fetch(t, base+"/debug/explain?"+query)
		assert.Equal(t, code, resp.StatusCode, query)
	}

	resp, body = fetch(t, base+"/debug/explain")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `<a href="?controller=A%3cb%3e">A&lt;b&gt;</a>`, "the index lists the controllers")
	assert.Contains(t, body, `<input name="resource"`)
}
