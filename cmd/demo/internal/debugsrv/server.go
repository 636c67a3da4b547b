package debugsrv

import (
	"bytes"
	"context"
	"errors"
	"expvar"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"golang.org/x/sync/errgroup"
)

// Source is what the pages show. Its methods are called concurrently, from
// the server's request goroutines.
type Source interface {
	// Controllers returns the state of every controller.
	Controllers() []ControllerRow
	// RenderGraph writes the dependency graph in format, one of
	// [GraphFormats].
	RenderGraph(w io.Writer, format string) error
}

// GraphFormats are the formats of /debug/graph, the first being the
// default, with their content types.
var GraphFormats = []struct{ Name, ContentType string }{
	{"dot", "text/vnd.graphviz; charset=utf-8"},
	{"mermaid", "text/plain; charset=utf-8"},
	{"json", "application/json"},
}

// NewHandler returns the handler of every debug page. now is the clock of
// the status page (time.Now when nil).
func NewHandler(src Source, now func() time.Time) http.Handler {
	if now == nil {
		now = time.Now
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/debug/", http.StatusFound)
	})
	mux.HandleFunc("GET /debug/{$}", serveIndex)
	mux.Handle("GET /debug/vars", expvar.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /debug/graph", func(w http.ResponseWriter, r *http.Request) {
		serveGraph(w, r, src)
	})
	mux.HandleFunc("GET /debug/controllers", func(w http.ResponseWriter, r *http.Request) {
		serveControllers(w, r, src, now())
	})
	return mux
}

var indexHTML = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>resgraph demo: debug</title></head>
<body><h1>resgraph demo</h1><ul>
<li><a href="/debug/controllers">controllers</a> (<a href="/debug/controllers?format=json">JSON</a>)</li>
<li>graph: {{range .}}<a href="/debug/graph?format={{.Name}}">{{.Name}}</a> {{end}}</li>
<li><a href="/debug/vars">expvar</a></li>
<li><a href="/debug/pprof/">pprof</a></li>
</ul></body></html>
`))

func serveIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = indexHTML.Execute(w, GraphFormats)
}

func serveGraph(w http.ResponseWriter, r *http.Request, src Source) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = GraphFormats[0].Name
	}
	ct := ""
	for _, f := range GraphFormats {
		if f.Name == format {
			ct = f.ContentType
		}
	}
	if ct == "" {
		http.Error(w, "unknown graph format "+format+": use dot, mermaid or json", http.StatusBadRequest)
		return
	}
	var buf bytes.Buffer
	if err := src.RenderGraph(&buf, format); err != nil {
		http.Error(w, "render graph: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	_, _ = buf.WriteTo(w)
}

func serveControllers(w http.ResponseWriter, r *http.Request, src Source, now time.Time) {
	rows := src.Controllers()
	var buf bytes.Buffer
	ct := "text/html; charset=utf-8"
	write := WriteControllersHTML
	if wantsJSON(r) {
		ct, write = "application/json", WriteControllersJSON
	}
	if err := write(&buf, rows, now); err != nil {
		http.Error(w, "render controllers: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	_, _ = buf.WriteTo(w)
}

// ShutdownTimeout bounds how long [Serve] waits for in-flight requests once
// its context is done; then it closes their connections.
const ShutdownTimeout = 5 * time.Second

// Serve serves h on ln until ctx is done, then shuts the server down. It
// returns nil after a shutdown caused by ctx, the server's error otherwise,
// and only after every goroutine it started has exited. Request contexts
// are canceled with ctx, so long requests (profiles) end promptly.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return errors.Join(err, srv.Close())
		}
		return nil
	})
	return g.Wait()
}
