package debughttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// explainPage serves /debug/explain?resource=NS/TYPE/ID and
// /debug/explain?controller=NAME as an HTML page, or with format=json as
// JSON (also for an Accept header that lists application/json first),
// format=text as plain text, format=fragment as an HTML fragment (the
// live page's panel).
type explainPage struct{ obs observe.Observer }

func (p explainPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	res, ctrl := q.Get("resource"), q.Get("controller")
	var x any
	var err error
	switch {
	case res == "" && ctrl == "" && !wantsJSON(r):
		p.serveIndex(w)
		return
	case (res == "") == (ctrl == ""):
		http.Error(w, "explain: give one of resource=NAMESPACE/TYPE/ID or controller=NAME", http.StatusBadRequest)
		return
	case res != "":
		ref, perr := explain.ParseResource(res)
		if perr != nil {
			http.Error(w, "explain: "+perr.Error(), http.StatusBadRequest)
			return
		}
		var v explain.Resource
		v, err = p.obs.Explain(r.Context(), resource.NewPointer(ref.Namespace, ref.Type, ref.ID))
		x = &v
	default:
		var v explain.Controller
		v, err = p.obs.ExplainController(r.Context(), ctrl)
		x = &v
	}
	if err != nil {
		code := http.StatusInternalServerError
		switch {
		case state.IsNotFoundError(err):
			code = http.StatusNotFound
		case state.IsInvalidError(err):
			code = http.StatusBadRequest
		case errors.Is(err, r.Context().Err()):
			return // the client is gone
		}
		http.Error(w, "explain: "+err.Error(), code)
		return
	}
	var buf bytes.Buffer
	ct := "text/html; charset=utf-8"
	switch format := q.Get("format"); {
	case format == "json" || (format == "" && wantsJSON(r)):
		ct = "application/json"
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(x)
	case format == "text":
		ct = "text/plain; charset=utf-8"
		err = explain.WriteText(&buf, x)
	case format == "fragment":
		err = explain.WriteHTML(&buf, x, true)
	case format == "" || format == "html":
		err = explain.WriteHTML(&buf, x, false)
	default:
		http.Error(w, "explain: unknown format "+format+": use html, json, text or fragment", http.StatusBadRequest)
		return
	}
	if err != nil {
		http.Error(w, "explain: render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = buf.WriteTo(w)
}

var explainIndexTmpl = template.Must(template.New("explain").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>resgraph: explain</title></head>
<body><h1>Explain</h1>
<form method="get"><label>Resource (NAMESPACE/TYPE/ID): <input name="resource" size="50"></label> <button>explain</button></form>
<h2>Controllers</h2><ul>
{{- range .}}
<li><a href="?controller={{.Name}}">{{.Name}}</a> ({{.Family}}, {{.Lifecycle}})</li>
{{- else}}<li>none</li>{{end}}
</ul><p><a href="/debug/">index</a></p></body></html>
`))

// serveIndex lists the controllers to explain and a form for a resource.
func (p explainPage) serveIndex(w http.ResponseWriter) {
	var buf bytes.Buffer
	if err := explainIndexTmpl.Execute(&buf, p.obs.Controllers()); err != nil {
		http.Error(w, "explain: render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}
