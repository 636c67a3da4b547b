package debughttp

import (
	"bufio"
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Durations of the sampled profiles when the request gives none.
const (
	defaultCPUSeconds   = 30
	defaultTraceSeconds = 1
)

// pprofHandler serves /debug/pprof/ from runtime/pprof and runtime/trace,
// in the formats `go tool pprof` and `go tool trace` read. It does not use
// net/http/pprof, whose init registers handlers on http.DefaultServeMux.
type pprofHandler struct{}

func (pprofHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, _ := strings.CutPrefix(r.URL.Path, "/debug/pprof/")
	switch name {
	case "":
		servePprofIndex(w)
	case "profile":
		serveCPUProfile(w, r)
	case "trace":
		serveTrace(w, r)
	case "cmdline":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprint(w, strings.Join(os.Args, "\x00"))
	case "symbol":
		serveSymbol(w, r)
	default:
		serveProfile(w, r, name)
	}
}

var pprofIndexTmpl = template.Must(template.New("pprof").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>resgraph: profiles</title></head>
<body><h1>Profiles</h1>
<table>
<tr><th>Count</th><th>Profile</th></tr>
{{- range .}}
<tr><td>{{.Count}}</td><td><a href="{{.Name}}?debug=1">{{.Name}}</a></td></tr>
{{- end}}
</table>
<p><a href="profile">profile</a> (CPU, ?seconds=N, default 30s) &middot;
<a href="trace?seconds=1">trace</a> (execution trace, ?seconds=N) &middot;
<a href="cmdline">cmdline</a> &middot; <a href="goroutine?debug=2">full goroutine stacks</a></p>
<p>Read them with <code>go tool pprof URL</code> and <code>go tool trace FILE</code>.</p>
</body></html>
`))

func servePprofIndex(w http.ResponseWriter) {
	type row struct {
		Name  string
		Count int
	}
	var rows []row
	for _, p := range pprof.Profiles() {
		rows = append(rows, row{p.Name(), p.Count()})
	}
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.Name, b.Name) })
	var buf bytes.Buffer
	if err := pprofIndexTmpl.Execute(&buf, rows); err != nil {
		http.Error(w, "render profiles: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}

// serveProfile writes the named runtime profile: gzipped protobuf, or text
// with ?debug=N (N > 0).
func serveProfile(w http.ResponseWriter, r *http.Request, name string) {
	p := pprof.Lookup(name)
	if p == nil {
		http.Error(w, "unknown profile "+strconv.Quote(name), http.StatusNotFound)
		return
	}
	debug, _ := strconv.Atoi(r.URL.Query().Get("debug"))
	if name == "heap" && r.URL.Query().Get("gc") != "" {
		goruntime.GC()
	}
	var buf bytes.Buffer
	if err := p.WriteTo(&buf, debug); err != nil {
		http.Error(w, "write profile: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if debug > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	}
	_, _ = buf.WriteTo(w)
}

// seconds reads ?seconds=N (a positive integer), def when absent.
func seconds(r *http.Request, def int) (time.Duration, error) {
	s := r.URL.Query().Get("seconds")
	if s == "" {
		return time.Duration(def) * time.Second, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("seconds=%q: want a positive integer", s)
	}
	return time.Duration(n) * time.Second, nil
}

// sample runs start, waits d or until the request is canceled, then stop;
// the output is buffered so that a failure to start is reported as an
// HTTP error.
func sample(w http.ResponseWriter, r *http.Request, def int, what, filename string, start func(*bytes.Buffer) error, stop func()) {
	d, err := seconds(r, def)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var buf bytes.Buffer
	if err := start(&buf); err != nil {
		// Another profile or trace is running: the runtime allows one.
		http.Error(w, "start "+what+": "+err.Error(), http.StatusConflict)
		return
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
	}
	stop()
	if r.Context().Err() != nil {
		return // the client is gone
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	_, _ = buf.WriteTo(w)
}

func serveCPUProfile(w http.ResponseWriter, r *http.Request) {
	sample(w, r, defaultCPUSeconds, "CPU profile", "profile",
		func(b *bytes.Buffer) error { return pprof.StartCPUProfile(b) }, pprof.StopCPUProfile)
}

func serveTrace(w http.ResponseWriter, r *http.Request) {
	sample(w, r, defaultTraceSeconds, "trace", "trace",
		func(b *bytes.Buffer) error { return trace.Start(b) }, trace.Stop)
}

// serveSymbol answers `go tool pprof`'s symbol lookups: a GET reports that
// symbols are available; a POST (or a GET with a query) of hexadecimal
// addresses separated by '+' gets one "address name" line per address the
// binary knows.
func serveSymbol(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	var input []byte
	if r.Method == http.MethodPost {
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20)); err != nil {
			http.Error(w, "read addresses: "+err.Error(), http.StatusBadRequest)
			return
		}
		input = buf.Bytes()
	} else {
		input = []byte(r.URL.RawQuery)
	}
	out := bufio.NewWriter(w)
	defer out.Flush()
	_, _ = fmt.Fprintln(out, "num_symbols: 1")
	for word := range strings.SplitSeq(string(input), "+") {
		pc, err := strconv.ParseUint(strings.TrimSpace(word), 0, 64)
		if err != nil || pc == 0 {
			continue
		}
		if f := goruntime.FuncForPC(uintptr(pc)); f != nil {
			_, _ = fmt.Fprintf(out, "%#x %s\n", pc, f.Name())
		}
	}
}
