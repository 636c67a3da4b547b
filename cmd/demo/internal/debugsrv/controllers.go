package debugsrv

import (
	"encoding/json"
	"html/template"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// ControllerRow is one controller's state as the status page shows it. It
// mirrors the engine's controller status so that the page can be rendered
// (and tested) from a plain value.
type ControllerRow struct {
	BackoffUntil time.Time     `json:"backoffUntil,omitzero"`
	LastErrorAt  time.Time     `json:"lastErrorAt,omitzero"`
	Name         string        `json:"name"`
	Kind         string        `json:"kind"`  // "controller" or "qcontroller"
	State        string        `json:"state"` // "starting", "running", "backoff" or "stopped"
	LastError    string        `json:"lastError,omitempty"`
	BusyTime     time.Duration `json:"busyTimeNs"`
	Reconciles   uint64        `json:"reconciles"`
	Crashes      uint64        `json:"crashes"`
	Restarts     uint64        `json:"restarts"`
	WakeUps      uint64        `json:"wakeUps"`
	Requeues     uint64        `json:"requeues"`
	QueueLen     int           `json:"queueLen"`
	InFlight     int           `json:"inFlight"`
}

// statusDoc is the JSON document of /debug/controllers.
type statusDoc struct {
	Time        time.Time       `json:"time"`
	Controllers []ControllerRow `json:"controllers"`
}

// WriteControllersJSON writes the rows as a JSON document
// {"time": ..., "controllers": [...]}.
func WriteControllersJSON(w io.Writer, rows []ControllerRow, now time.Time) error {
	if rows == nil {
		rows = []ControllerRow{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(statusDoc{Time: now, Controllers: rows})
}

var pageTmpl = template.Must(template.New("controllers").Funcs(template.FuncMap{
	"state": func(r ControllerRow, now time.Time) string {
		if r.State == "backoff" && !r.BackoffUntil.IsZero() {
			return "backing off until " + r.BackoffUntil.Format("15:04:05.000") + " (" + r.BackoffUntil.Sub(now).Round(time.Millisecond).String() + ")"
		}
		return r.State
	},
	"ago": func(t, now time.Time) string {
		return t.Format("15:04:05.000") + ", " + now.Sub(t).Round(time.Millisecond).String() + " ago"
	},
	"dur": func(d time.Duration) string { return d.Round(time.Microsecond).String() },
}).Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>resgraph demo: controllers</title>
<style>
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.backoff td { background: #fff3cd; }
tr.stopped td { color: #888; }
.err { color: #a00; font-family: monospace; white-space: pre-wrap; }
</style></head>
<body>
<h1>Controllers</h1>
<p>{{len .Rows}} controllers at {{.Now.Format "15:04:05.000"}} &middot; <a href="?format=json">JSON</a> &middot; <a href="/debug/">index</a></p>
<table>
<tr><th>Controller</th><th>Kind</th><th>State</th><th>Reconciles</th><th>Busy time</th><th>Queue</th><th>In flight</th><th>Wake-ups</th><th>Requeues</th><th>Crashes</th><th>Restarts</th><th>Last error</th></tr>
{{- range .Rows}}
<tr class="{{.State}}"><td>{{.Name}}</td><td>{{.Kind}}</td><td>{{state . $.Now}}</td><td class="num">{{.Reconciles}}</td><td class="num">{{dur .BusyTime}}</td><td class="num">{{.QueueLen}}</td><td class="num">{{.InFlight}}</td><td class="num">{{.WakeUps}}</td><td class="num">{{.Requeues}}</td><td class="num">{{.Crashes}}</td><td class="num">{{.Restarts}}</td><td>{{if .LastError}}<span class="err">{{.LastError}}</span><br><small>at {{ago .LastErrorAt $.Now}}</small>{{else}}&ndash;{{end}}</td></tr>
{{- end}}
</table>
</body></html>
`))

// WriteControllersHTML writes the rows as an HTML page; every value is
// escaped.
func WriteControllersHTML(w io.Writer, rows []ControllerRow, now time.Time) error {
	return pageTmpl.Execute(w, struct {
		Now  time.Time
		Rows []ControllerRow
	}{now, rows})
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
