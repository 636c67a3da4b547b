package explain

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"time"

	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// htmlFuncs are the template helpers; links are relative to the page
// (?resource=..., ?controller=...), so the rendering works under any path.
var htmlFuncs = template.FuncMap{
	"sentence": func(d Doing, now time.Time) string { return d.Sentence(now) },
	"clock":    clock,
	"dur":      func(d time.Duration) string { return d.Round(time.Microsecond).String() },
	"resLink": func(r trace.Ref) template.URL {
		return template.URL("?resource=" + url.QueryEscape(ResourceParam(r)))
	},
	"ctrlLink": func(name string) template.URL {
		return template.URL("?controller=" + url.QueryEscape(name))
	},
	"reconcile":     reconcileText,
	"cause":         causeText,
	"kind":          kindText,
	"noWriter":      func() string { return NoWriterText },
	"outsideWriter": func() string { return OutsideWriterText },
	"deref":         func(r *trace.Ref) trace.Ref { return *r },
	"state":         func(d Doing) string { return string(d.Work) },
}

const htmlStyle = `<style>
.explain { font-family: sans-serif; }
.explain table { border-collapse: collapse; margin: 0.3em 0 1em; }
.explain th, .explain td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
.explain .state-idle { color: #2a7a2a; }
.explain .state-backoff, .explain .state-restarting, .explain .state-blocked, .explain .state-waitingFinalizer { color: #a05a00; font-weight: bold; }
.explain .state-running, .explain .state-queued { color: #1f4fa0; }
.explain .err { color: #a00; font-family: monospace; white-space: pre-wrap; }
.explain .note { color: #666; }
</style>`

var fragmentTmpl = template.Must(template.New("fragment").Funcs(htmlFuncs).Parse(`
{{- define "resource"}}<div class="explain" data-explain="resource">
<h2>Resource {{.Resource.String}}</h2>
<p>{{if .Exists}}exists: version {{.Version}}, {{.Phase}}{{if .Owner}}, owner <a href="{{ctrlLink .Owner}}">{{.Owner}}</a>{{end}}{{if .Finalizers}}, finalizers {{range $i, $f := .Finalizers}}{{if $i}}, {{end}}{{$f}}{{end}}{{end}}{{else}}<b>does not exist</b>{{end}}</p>
<p>written by: {{range $i, $e := .Writers}}{{if $i}}, {{end}}<a href="{{ctrlLink $e.Controller}}">{{$e.Controller}}</a> ({{$e.EdgeType}}){{else}}none{{end}}<br>
read by: {{range $i, $e := .Readers}}{{if $i}}, {{end}}<a href="{{ctrlLink $e.Controller}}">{{$e.Controller}}</a> ({{$e.EdgeType}}){{else}}none{{end}}</p>
<h3>Controllers now</h3>
<table><tr><th>Controller</th><th>Role</th><th>Doing</th></tr>
{{- range .Controllers}}
<tr><td><a href="{{ctrlLink .Controller}}">{{.Controller}}</a> ({{.Family}})</td><td>{{.Role}}</td><td class="state-{{state .Doing}}">{{sentence .Doing $.Time}}</td></tr>
{{- else}}<tr><td colspan="3">none</td></tr>{{end}}
</table>
<h3>Last changes (newest first)</h3>
<table><tr><th>Version</th><th>Time</th><th>Change</th><th>Reconciles it caused</th></tr>
{{- range .Changes}}
<tr><td>{{.Version}}</td><td>{{clock .Time}}</td><td>{{.Op}} {{if .Writer}}by <a href="{{ctrlLink .Writer}}">{{.Writer}}</a>{{else}}from outside the Runtime{{end}}</td><td>{{range .Reconciles}}{{reconcile .}}<br>{{else}}&ndash;{{end}}</td></tr>
{{- else}}<tr><td colspan="4">none in the trace</td></tr>{{end}}
</table>
{{template "notes" .Notes}}</div>{{end}}
{{- define "controller"}}<div class="explain" data-explain="controller">
<h2>{{.Family}} {{.Name}}</h2>
<p class="state-{{state .Doing}}" data-state="{{.Doing.Work}}">{{sentence .Doing .Time}}</p>
{{if .Leadership}}<p data-leadership>leadership: {{.Leadership}}</p>{{end}}
{{if .LastError}}<p>last error at {{clock .LastErrorAt}}: <span class="err">{{.LastError}}</span></p>{{end}}
<p>reconciles {{.Counters.Reconciles}}, crashes {{.Counters.Crashes}}, restarts {{.Counters.Restarts}}, wake-ups {{.Counters.WakeUps}}, requeues {{.Counters.Requeues}}, queue {{.Counters.QueueLen}}, in flight {{.Counters.InFlight}}</p>
{{if .Latencies}}<table><tr><th>Latency</th><th>p50</th><th>p99</th><th>count</th></tr>
{{- range $name, $l := .Latencies}}<tr><td>{{$name}}</td><td>{{dur $l.P50}}</td><td>{{dur $l.P99}}</td><td>{{$l.Count}}</td></tr>{{end}}
</table>{{end}}
<h3>Inputs</h3><ul>
{{- range .Inputs}}<li>{{.EdgeType}} {{kind .Namespace .Type .ID}}{{if .NoWriter}} ({{noWriter}}){{else if .OutsideWriter}} ({{outsideWriter}}){{else if .Writers}} &larr; {{range $i, $w := .Writers}}{{if $i}}, {{end}}<a href="{{ctrlLink $w}}">{{$w}}</a>{{end}}{{end}}</li>{{else}}<li>none</li>{{end}}
</ul>
<h3>Outputs</h3><ul>
{{- range .Outputs}}<li>{{.EdgeType}} {{.Type}}{{if .Readers}} &rarr; {{range $i, $r := .Readers}}{{if $i}}, {{end}}<a href="{{ctrlLink $r}}">{{$r}}</a>{{end}}{{end}}</li>{{else}}<li>none</li>{{end}}
</ul>
{{if .Items}}<h3>Items</h3><table><tr><th>Item</th><th>State</th></tr>
{{- range .Items}}<tr><td>{{.Op}} <a href="{{resLink .Item}}">{{.Item.String}}</a></td><td>{{.Work}}{{if not .Due.IsZero}}, due {{clock .Due}}{{end}}{{if .Attempt}} (attempt {{.Attempt}}){{end}}{{if .Error}} <span class="err">{{.Error}}</span>{{end}}</td></tr>{{end}}
</table>{{end}}
<h3>Last reconciles (newest first)</h3>
<table><tr><th>Reconcile</th><th>Ran for</th></tr>
{{- range .Recent}}
<tr><td>{{reconcile .}}</td><td>{{if .Cause}}<a href="{{resLink (deref .Cause)}}">{{cause .}}</a>{{else}}{{cause .}}{{end}}</td></tr>
{{- else}}<tr><td colspan="2">none in the trace</td></tr>{{end}}
</table>
{{template "notes" .Notes}}</div>{{end}}
{{- define "notes"}}{{range .}}<p class="note">{{.}}</p>{{end}}{{end}}`))

var pageTmpl = template.Must(template.Must(fragmentTmpl.Clone()).Parse(`{{define "page"}}<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>resgraph: explain {{.Title}}</title>` + htmlStyle + `</head>
<body>{{if .Resource}}{{template "resource" .Resource}}{{else}}{{template "controller" .Controller}}{{end}}
<p><a href="?{{.Query}}&amp;format=json">JSON</a> &middot; <a href="/debug/">index</a></p>
</body></html>{{end}}`))

type pageData struct {
	Title      string
	Query      template.URL
	Resource   *Resource
	Controller *Controller
}

// WriteHTML writes x — a Resource or a Controller (or a pointer to one) —
// as a whole HTML page, or, with fragment set, as a <div class="explain">
// to insert into another page. Every name is escaped; links to other
// explanations are relative (?resource=NS/TYPE/ID, ?controller=NAME).
// Other values are an error.
func WriteHTML(w io.Writer, x any, fragment bool) error {
	var d pageData
	switch v := x.(type) {
	case Resource:
		d.Resource = &v
	case *Resource:
		d.Resource = v
	case Controller:
		d.Controller = &v
	case *Controller:
		d.Controller = v
	default:
		return fmt.Errorf("explain: cannot render %T", x)
	}
	var buf bytes.Buffer
	var err error
	switch {
	case fragment && d.Resource != nil:
		err = fragmentTmpl.ExecuteTemplate(&buf, "resource", d.Resource)
	case fragment:
		err = fragmentTmpl.ExecuteTemplate(&buf, "controller", d.Controller)
	default:
		if d.Resource != nil {
			d.Title, d.Query = d.Resource.Resource.String(), template.URL("resource="+url.QueryEscape(ResourceParam(d.Resource.Resource)))
		} else {
			d.Title, d.Query = d.Controller.Name, template.URL("controller="+url.QueryEscape(d.Controller.Name))
		}
		err = pageTmpl.ExecuteTemplate(&buf, "page", d)
	}
	if err != nil {
		return err
	}
	_, err = buf.WriteTo(w)
	return err
}
