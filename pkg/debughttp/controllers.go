package debughttp

import (
	"bytes"
	"encoding/json"
	"html/template"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/histogram"
)

// StatusDocument is the JSON document of /debug/controllers: the time of
// the report, every controller's status with its metrics, sorted by name,
// each named as observe.ControllerStatus says (lowerCamelCase, zero times
// omitted), and the hot loops flagged now (omitted when none is).
type StatusDocument struct {
	Time        time.Time                  `json:"time"`
	Controllers []observe.ControllerStatus `json:"controllers"`
	HotLoops    []observe.HotLoop          `json:"hotLoops,omitempty"`
}

// controllersPage serves /debug/controllers.
type controllersPage struct {
	obs observe.Observer
	now func() time.Time
}

func (p controllersPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	doc := StatusDocument{Time: p.now(), Controllers: p.obs.Controllers(), HotLoops: p.obs.HotLoops()}
	var buf bytes.Buffer
	ct := "text/html; charset=utf-8"
	write := writeControllersHTML
	if wantsJSON(r) {
		ct, write = "application/json", writeControllersJSON
	}
	if err := write(&buf, doc); err != nil {
		http.Error(w, "render controllers: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	_, _ = buf.WriteTo(w)
}

// writeControllersJSON writes doc as indented JSON; an empty list is [].
func writeControllersJSON(w io.Writer, doc StatusDocument) error {
	if doc.Controllers == nil {
		doc.Controllers = []observe.ControllerStatus{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

var controllersTmpl = template.Must(template.New("controllers").Funcs(template.FuncMap{
	"state": func(s observe.ControllerStatus, now time.Time) string {
		if s.Lifecycle == observe.LifecycleBackoff && !s.BackoffUntil.IsZero() {
			return "backing off until " + s.BackoffUntil.Format("15:04:05.000") + " (" + s.BackoffUntil.Sub(now).Round(time.Millisecond).String() + ")"
		}
		st := s.Lifecycle.String()
		if !s.Since.IsZero() {
			st += " since " + s.Since.Format("15:04:05.000")
		}
		if l := s.Leadership; l != nil {
			st += "; " + l.Role.String() + " in election " + l.Election
			if !l.Since.IsZero() {
				st += " since " + l.Since.Format("15:04:05.000")
			}
			if l.Term > 0 {
				st += " (term " + strconv.FormatUint(l.Term, 10) + ")"
			}
		}
		return st
	},
	"ago": func(t, now time.Time) string {
		return t.Format("15:04:05.000") + ", " + now.Sub(t).Round(time.Millisecond).String() + " ago"
	},
	"dur": func(d time.Duration) string { return d.Round(time.Microsecond).String() },
	// lat summarizes a histogram as "p50 / p99 (n)", "–" when empty.
	"lat": func(s histogram.Snapshot) string {
		if s.Count == 0 {
			return "–"
		}
		return s.Quantile(0.5).Round(time.Microsecond).String() + " / " + s.Quantile(0.99).Round(time.Microsecond).String() +
			" (" + strconv.FormatUint(s.Count, 10) + ")"
	},
	// all adds the histograms of every outcome.
	"all": func(m map[string]histogram.Snapshot) histogram.Snapshot {
		var s histogram.Snapshot
		for _, h := range m {
			s = s.Add(h)
		}
		return s
	},
	"pct": func(f float64) string { return strconv.Itoa(int(f*100+0.5)) + "%" },
}).Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>resgraph: controllers</title>
<style>
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.backoff td { background: #fff3cd; }
tr.stopped td { color: #888; }
tr.hot td { background: #f8d7da; }
.err { color: #a00; font-family: monospace; white-space: pre-wrap; }
</style></head>
<body>
<h1>Controllers</h1>
<p>{{len .Controllers}} controllers at {{.Time.Format "15:04:05.000"}} &middot; <a href="?format=json">JSON</a> &middot; <a href="/debug/">index</a></p>
{{- if .HotLoops}}
<h2>Hot loops</h2><ul>
{{- range .HotLoops}}
<li class="err">{{.Cycle}} ({{printf "%.1f" .Rate}}/s, since {{ago .Since $.Time}})</li>
{{- end}}
</ul>
{{- end}}
<table>
<tr><th>Controller</th><th>Family</th><th>State</th><th>Reconciles</th><th>Busy time</th><th>Queue</th><th>In flight</th><th>Wake-ups</th><th>Requeues</th><th>Crashes</th><th>Restarts</th><th>Queue wait p50 / p99</th><th>Duration p50 / p99</th><th>Lag p50 / p99</th><th>Startup p50 / p99</th><th>Busy</th><th>Last error</th></tr>
{{- range .Controllers}}
<tr class="{{.Lifecycle}}{{if .HotLoop}} hot{{end}}"><td>{{.Name}}{{if .HotLoop}}<br><small class="err">hot loop: {{.HotLoop}}</small>{{end}}</td><td>{{.Family}}</td><td>{{state . $.Time}}</td><td class="num">{{.Metrics.Reconciles}}</td><td class="num">{{dur .Metrics.BusyTime}}</td><td class="num">{{.QueueLen}}</td><td class="num">{{.InFlight}}</td><td class="num">{{.Metrics.WakeUps}}</td><td class="num">{{.Metrics.Requeues}}</td><td class="num">{{.Metrics.Crashes}}</td><td class="num">{{.Metrics.Restarts}}</td><td class="num">{{lat .Metrics.QueueWait}}</td><td class="num">{{lat (all .Metrics.Duration)}}</td><td class="num">{{lat .Metrics.Lag}}</td><td class="num">{{lat .Metrics.Startup}}</td><td class="num">{{pct .Metrics.Busy}}</td><td>{{if .LastError}}<span class="err">{{.LastError}}</span>{{if not .LastErrorAt.IsZero}}<br><small>at {{ago .LastErrorAt $.Time}}</small>{{end}}{{else}}&ndash;{{end}}{{if .ParkedItems}}<br><small>{{.ParkedItems}} parked until their next change:</small>{{range .Parked}}<br><span class="err">{{.Item}} ({{.Attempts}} attempts): {{.LastError}}</span>{{end}}{{end}}</td></tr>
{{- end}}
</table>
</body></html>
`))

// writeControllersHTML writes doc as an HTML page; every value is escaped.
func writeControllersHTML(w io.Writer, doc StatusDocument) error {
	return controllersTmpl.Execute(w, doc)
}

// wantsJSON reports whether the request asks for JSON: ?format=json, or an
// Accept header whose first media type is application/json.
func wantsJSON(r *http.Request) bool {
	if f := r.URL.Query().Get("format"); f != "" {
		return f == "json"
	}
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		return mt == "application/json"
	}
	return false
}
