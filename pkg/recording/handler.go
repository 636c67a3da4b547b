package recording

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRecordFor bounds the duration the debug handler records for.
const MaxRecordFor = time.Hour

// Handler serves the recorder on a debug endpoint (mount it at
// "/debug/recording", e.g. with debughttp.WithPage):
//
//	GET /debug/recording                 the window now, as a file (Take)
//	GET /debug/recording?for=5m          the next five minutes (Record)
//	GET /debug/recording?format=text     as text (WriteText: no sensitive spec)
//	GET /debug/recording/kept            the recordings kept on their own
//	GET /debug/recording/kept/N          the Nth of them, as a file
//
// A file is served as application/octet-stream, named recording.rgrec.
func (r *Recorder) Handler() http.Handler { return recordingHandler{r} }

type recordingHandler struct{ r *Recorder }

func (h recordingHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	rest := req.URL.Path
	if i := strings.Index(rest, "/kept"); i >= 0 {
		h.kept(w, req, strings.TrimPrefix(rest[i+len("/kept"):], "/"))
		return
	}
	var rec *Recording
	var err error
	if s := req.URL.Query().Get("for"); s != "" {
		d, perr := time.ParseDuration(s)
		if perr != nil || d <= 0 || d > MaxRecordFor {
			http.Error(w, fmt.Sprintf("for=%q: a duration in (0, %v]", s, MaxRecordFor), http.StatusBadRequest)
			return
		}
		rec, err = h.r.Record(req.Context(), d)
	} else {
		rec, err = h.r.Take()
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	h.serve(w, req, rec)
}

func (h recordingHandler) kept(w http.ResponseWriter, req *http.Request, which string) {
	kept := h.r.Kept()
	if which == "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for i, k := range kept {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", i, k.Recording.Taken.Format(time.RFC3339), k.Recording.Reason, k.Path)
		}
		return
	}
	i, err := strconv.Atoi(which)
	if err != nil || i < 0 || i >= len(kept) {
		http.Error(w, fmt.Sprintf("no kept recording %q (there are %d)", which, len(kept)), http.StatusNotFound)
		return
	}
	h.serve(w, req, kept[i].Recording)
}

// serve writes rec as a file, or as text with format=text.
func (h recordingHandler) serve(w http.ResponseWriter, req *http.Request, rec *Recording) {
	var buf bytes.Buffer
	if req.URL.Query().Get("format") == "text" {
		_ = WriteText(&buf, rec)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(buf.Bytes())
		return
	}
	if err := Write(&buf, rec, h.r.reg); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="recording.rgrec"`)
	_, _ = w.Write(buf.Bytes())
}
