package debughttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"

	"github.com/resgraph/resgraph/pkg/access"
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
	switch {
	case res == "" && ctrl == "" && !wantsJSON(r):
		p.serveIndex(w)
		return
	case (res == "") == (ctrl == ""):
		http.Error(w, "explain: give one of resource=NAMESPACE/TYPE/ID or controller=NAME", http.StatusBadRequest)
		return
	}
	x, code, err := p.explain(r, res, ctrl)
	if err != nil {
		if code != 0 {
			http.Error(w, "explain: "+err.Error(), code)
		}
		return
	}
	var buf bytes.Buffer
	ct, code, err := render(&buf, x, q.Get("format"), wantsJSON(r))
	if err != nil {
		http.Error(w, "explain: "+err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = buf.WriteTo(w)
}

// explain returns the explanation of the resource res ("NS/TYPE/ID") or,
// when res is empty, of the controller ctrl, without what the request's
// subject may not see (rule A2: a resource of a sensitive type it is not
// granted is a 403, and explanations leave such resources out); on an
// error, the HTTP status to answer with (0: none, the client is gone).
func (p explainPage) explain(r *http.Request, res, ctrl string) (x any, code int, err error) {
	if res != "" {
		ref, perr := explain.ParseResource(res)
		if perr != nil {
			return nil, http.StatusBadRequest, perr
		}
		sub := access.FromContext(r.Context())
		if sub != nil {
			if err := sub.ExplainResource(r.Context(), ref.Namespace, ref.Type, ref.ID); err != nil {
				return nil, http.StatusForbidden, err
			}
		}
		var v explain.Resource
		v, err = p.obs.Explain(r.Context(), resource.NewPointer(ref.Namespace, ref.Type, ref.ID))
		if sub != nil {
			sub.ScrubResource(r.Context(), &v)
		}
		x = &v
	} else {
		var v explain.Controller
		v, err = p.obs.ExplainController(r.Context(), ctrl)
		if sub := access.FromContext(r.Context()); sub != nil {
			sub.ScrubController(r.Context(), &v)
		}
		x = &v
	}
	switch {
	case err == nil:
		return x, 0, nil
	case state.IsNotFoundError(err):
		return nil, http.StatusNotFound, err
	case state.IsInvalidError(err):
		return nil, http.StatusBadRequest, err
	case errors.Is(err, r.Context().Err()):
		return nil, 0, err // the client is gone
	}
	return nil, http.StatusInternalServerError, err
}

// render writes x to buf in format (json, text, fragment, html; "" is
// html, or json when the client asks for it) and returns its content
// type; on an error, the HTTP status to answer with.
func render(buf *bytes.Buffer, x any, format string, jsonFirst bool) (ct string, code int, err error) {
	ct = "text/html; charset=utf-8"
	switch {
	case format == "json" || (format == "" && jsonFirst):
		ct = "application/json"
		enc := json.NewEncoder(buf)
		enc.SetIndent("", "  ")
		err = enc.Encode(x)
	case format == "text":
		ct = "text/plain; charset=utf-8"
		err = explain.WriteText(buf, x)
	case format == "fragment":
		err = explain.WriteHTML(buf, x, true)
	case format == "" || format == "html":
		err = explain.WriteHTML(buf, x, false)
	default:
		return "", http.StatusBadRequest, errors.New("unknown format " + format + ": use html, json, text or fragment")
	}
	if err != nil {
		return "", http.StatusInternalServerError, errors.New("render: " + err.Error())
	}
	return ct, 0, nil
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
