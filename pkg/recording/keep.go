package recording

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"go.uber.org/zap"
)

// Kept is a recording a recorder kept on its own (rule RC7).
type Kept struct {
	Recording *Recording
	// Path is the file it was written to (WithKeep), "" when none; Err
	// the error of that write.
	Path string
	Err  error
}

// Kept returns the recordings kept on their own, oldest first (at most the
// limit of WithKeep).
func (r *Recorder) Kept() []Kept {
	r.keeper.mu.Lock()
	defer r.keeper.mu.Unlock()
	return append([]Kept(nil), r.keeper.kept...)
}

// keeper keeps a recording when the Runtime flags a hot loop or a
// controller's failures reach the threshold: once per hot loop while it is
// flagged, once per controller until its failures fall back below the
// threshold.
type keeper struct {
	r  *Recorder
	mu sync.Mutex
	// The fields below are protected by mu.
	kept    []Kept
	loops   map[string]bool
	crashes map[string]uint64
	tripped map[string]bool
}

func (k *keeper) init(r *Recorder) {
	k.r, k.loops, k.crashes, k.tripped = r, map[string]bool{}, map[string]uint64{}, map[string]bool{}
}

// poll reads the Runtime's hot loops and statuses and keeps what they
// call for.
func (k *keeper) poll() {
	obs := k.r.cfg.rt.Observe()
	var reasons []string
	k.mu.Lock()
	active := map[string]bool{}
	for _, l := range obs.HotLoops() {
		active[l.Cycle] = true
		if !k.loops[l.Cycle] {
			reasons = append(reasons, "hot loop: "+l.Cycle)
		}
	}
	k.loops = active
	if th := k.r.cfg.failures; th > 0 {
		for _, s := range obs.Controllers() {
			base, seen := k.crashes[s.Name]
			if !seen {
				base, k.crashes[s.Name] = s.Metrics.Crashes, s.Metrics.Crashes
			}
			crashes := s.Metrics.Crashes - base
			over := s.FailingItems >= th || crashes >= uint64(th)
			if over && !k.tripped[s.Name] {
				reasons = append(reasons, fmt.Sprintf("failures: %s has %d failing items and %d crashes (last error: %s)", s.Name, s.FailingItems, crashes, s.LastError))
				k.crashes[s.Name] = s.Metrics.Crashes
			}
			k.tripped[s.Name] = over
		}
	}
	k.mu.Unlock()
	for _, reason := range reasons {
		k.keep(reason)
	}
}

// keep takes a recording and keeps it (and writes it, with WithKeep).
func (k *keeper) keep(reason string) {
	rec, err := k.r.take(reason, nil, true)
	if err != nil {
		k.r.cfg.logger.Warn("recorder: could not keep a recording", zap.String("reason", reason), zap.Error(err))
		return
	}
	kept := Kept{Recording: rec}
	if dir := k.r.cfg.keepDir; dir != "" {
		kept.Path = filepath.Join(dir, rec.Taken.UTC().Format("20060102T150405.000Z")+"-"+slug(reason)+".rgrec")
		kept.Err = WriteFile(kept.Path, rec, k.r.reg)
	}
	k.r.cfg.logger.Warn("recorder: kept a recording", zap.String("reason", reason), zap.String("path", kept.Path),
		zap.Int("changes", len(rec.Changes)), zap.Duration("covers", rec.Duration()), zap.Error(kept.Err))
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = append(k.kept, kept)
	if n := len(k.kept) - k.r.cfg.keepLimit; n > 0 {
		k.kept = append(k.kept[:0], k.kept[n:]...)
	}
}

// slug turns a reason into a short file-name part.
func slug(s string) string {
	s, _, _ = strings.Cut(s, ":")
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}
