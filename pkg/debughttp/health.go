package debughttp

import (
	"encoding/json"
	"net/http"

	"github.com/resgraph/resgraph/pkg/observe"
)

// healthPage serves /healthz (live) or /readyz (ready): 200 and "live" or
// "ready" when the check passes, 503 and the checks that fail, one per
// line, naming the controller or the kind and why, when it does not (see
// observe.Health). ?format=json serves the whole observe.Health. An
// Observer that does not tell its health (observe.HealthReporter) is 501.
type healthPage struct {
	obs   observe.Observer
	ready bool // /readyz; /healthz otherwise
}

func (p healthPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := observe.HealthOf(p.obs)
	if !ok {
		http.Error(w, "this Observer does not tell its health (observe.HealthReporter)", http.StatusNotImplemented)
		return
	}
	pass, text := h.Live, h.LiveText()
	if p.ready {
		pass, text = h.Ready, h.ReadyText()
	}
	code := http.StatusOK
	if !pass {
		code = http.StatusServiceUnavailable
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Query().Get("format") == "json" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(h)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(text))
}
