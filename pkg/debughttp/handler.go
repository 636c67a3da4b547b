package debughttp

import (
	"bytes"
	"expvar"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/graph"
	"github.com/resgraph/resgraph/pkg/observe"
)

// Page is one debug page: the path it is served at (under /debug/, e.g.
// "/debug/trace", but for the probes /healthz and /readyz), the title the
// index links it with, and its handler. A path that ends with "/" serves
// its whole subtree. Under [WithAccess], Access names the page group that
// grants it (access.PagePprof, PageExplain, PageGraph, PageHealth,
// PageRecording, or a page the policy was given with access.WithPages);
// a page without one is served only to a role granting every page ("*").
type Page struct {
	Path    string
	Title   string
	Handler http.Handler
	Access  access.Page
}

// Option configures [New].
type Option func(*config)

type config struct {
	pages  []Page
	now    func() time.Time
	policy *access.Policy
}

// WithAccess makes the handler serve each page only to a subject whose
// roles grant its access.Page (rule A1): pprof and expvar need
// access.PagePprof, explain and the trace access.PageExplain, the graph,
// the live graph and the controllers access.PageGraph, the probes
// access.PageHealth; the index, any role, and it lists only the pages the
// subject may open. The subject is the request's (access.FromContext),
// which [Serve] with [WithAuthenticator] puts there; a request without one
// is denied. Whatever the option, explain and the trace leave out the
// resources of sensitive types a request's subject is not granted by name
// (rule A2). A denial is a 403 whose body is the access.DeniedError's
// message, and is audited.
func WithAccess(p *access.Policy) Option { return func(c *config) { c.policy = p } }

// WithPage adds a page (or replaces the built-in page of the same path).
func WithPage(p Page) Option {
	return func(c *config) { c.pages = append(c.pages, p) }
}

// WithClock sets the clock the pages show times against (time.Now by
// default).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// Handler serves the debug pages of one Runtime; see the package doc. It
// is safe for concurrent use.
type Handler struct {
	mux    *http.ServeMux
	pages  []Page
	policy *access.Policy
}

// New returns the handler of the debug pages of the Runtime o observes
// (runtime.Runtime.Observe), with the pages of the options added.
func New(o observe.Observer, opts ...Option) *Handler {
	c := config{now: time.Now}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	live := newLivePage(o, c.now)
	builtin := []Page{
		{Path: "/debug/controllers", Title: "controllers", Handler: controllersPage{obs: o, now: c.now}, Access: access.PageGraph},
		{Path: "/debug/graph", Title: "graph", Handler: graphPage{obs: o}, Access: access.PageGraph},
		{Path: "/debug/graph/live", Title: "live graph", Handler: live, Access: access.PageGraph},
		{Path: "/debug/trace", Title: "trace", Handler: tracePage{obs: o}, Access: access.PageExplain},
		{Path: "/debug/explain", Title: "explain", Handler: explainPage{obs: o}, Access: access.PageExplain},
		{Path: "/debug/vars", Title: "expvar", Handler: expvar.Handler(), Access: access.PagePprof},
		{Path: "/debug/pprof/", Title: "pprof", Handler: pprofHandler{}, Access: access.PagePprof},
		{Path: "/healthz", Title: "liveness", Handler: healthPage{obs: o}, Access: access.PageHealth},
		{Path: "/readyz", Title: "readiness", Handler: healthPage{obs: o, ready: true}, Access: access.PageHealth},
	}
	h := &Handler{mux: http.NewServeMux(), policy: c.policy}
	// The live page's script and style, not listed in the index.
	h.mux.Handle("GET /debug/graph/live/", h.guard(access.PageGraph, live))
	for _, p := range builtin {
		if !hasPage(c.pages, p.Path) {
			h.pages = append(h.pages, p)
		}
	}
	h.pages = append(h.pages, c.pages...)
	for _, p := range h.pages {
		h.mux.Handle(p.Path, h.guard(pageAccess(p), p.Handler))
	}
	h.mux.Handle("GET /debug/{$}", h.guard("", http.HandlerFunc(h.serveIndex)))
	h.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/debug/", http.StatusFound)
	})
	return h
}

func hasPage(pages []Page, path string) bool {
	for _, p := range pages {
		if p.Path == path {
			return true
		}
	}
	return false
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Pages returns the pages the handler serves, built-in ones first.
func (h *Handler) Pages() []Page { return append([]Page(nil), h.pages...) }

var indexTmpl = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>resgraph: debug</title></head>
<body><h1>resgraph debug pages</h1><ul>
{{- range .}}
<li><a href="{{.Path}}">{{.Title}}</a>{{range .Extra}} &middot; <a href="{{.Href}}">{{.Text}}</a>{{end}}</li>
{{- end}}
</ul></body></html>
`))

type link struct{ Href, Text string }

type indexEntry struct {
	Path, Title string
	Extra       []link
}

func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	entries := make([]indexEntry, 0, len(h.pages))
	for _, p := range h.pages {
		if !h.listed(r, p) {
			continue
		}
		e := indexEntry{Path: p.Path, Title: p.Title}
		switch p.Path {
		case "/debug/controllers":
			e.Extra = []link{{"/debug/controllers?format=json", "JSON"}}
		case "/debug/graph/live":
			e.Extra = []link{{"/debug/graph/live?format=json", "JSON"}}
		case "/debug/trace":
			e.Extra = []link{{"/debug/trace?follow=1", "follow"}}
		case "/debug/graph":
			for _, f := range graphFormats[1:] {
				e.Extra = append(e.Extra, link{"/debug/graph?format=" + f.name, f.name})
			}
		}
		if e.Title == "" {
			e.Title = strings.TrimPrefix(p.Path, "/debug/")
		}
		entries = append(entries, e)
	}
	var buf bytes.Buffer
	if err := indexTmpl.Execute(&buf, entries); err != nil {
		http.Error(w, "render index: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}

// graphFormats are the formats of /debug/graph, the default first, with
// their content types.
var graphFormats = []struct{ name, contentType string }{
	{"dot", "text/vnd.graphviz; charset=utf-8"},
	{"mermaid", "text/plain; charset=utf-8"},
	{"json", "application/json"},
}

// graphPage serves /debug/graph.
type graphPage struct{ obs observe.Observer }

func (p graphPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("format")
	if name == "" {
		name = graphFormats[0].name
	}
	ct := ""
	for _, f := range graphFormats {
		if f.name == name {
			ct = f.contentType
		}
	}
	format, err := graph.ParseFormat(name)
	if ct == "" || err != nil {
		http.Error(w, "unknown graph format "+name+": use dot, mermaid or json", http.StatusBadRequest)
		return
	}
	g, err := p.obs.Graph()
	var buf bytes.Buffer
	if err == nil {
		err = graph.Render(&buf, g, format)
	}
	if err != nil {
		http.Error(w, "render graph: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	_, _ = buf.WriteTo(w)
}
