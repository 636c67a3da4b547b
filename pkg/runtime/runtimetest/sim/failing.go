package sim

import (
	"fmt"
	"strings"
)

// failing names, for a run that does not converge, each thing left
// failing and its last error, as the Runtime knows them: every
// QController item with an error (explain's items: "Reconcile T(ns/id)
// of C (attempt n): error") and every controller whose last failure was
// not followed by a recovery ("C: Reconcile T(ns/id): error", or a
// Controller's error). At most eight, then a count.
func (r *run) failing() string {
	if r.inc == nil || r.inc.rt == nil {
		return ""
	}
	ob := r.inc.rt.Observe()
	var parts []string
	for _, st := range ob.Controllers() {
		n := len(parts)
		if x, err := ob.ExplainController(r.ctx, st.Name); err == nil {
			for _, it := range x.Items {
				if it.Error != "" {
					parts = append(parts, fmt.Sprintf("%s %s of %s (attempt %d): %s", it.Op, it.Item, st.Name, it.Attempt, it.Error))
				}
			}
		}
		if len(parts) == n && st.LastError != "" && !st.Recovered {
			parts = append(parts, fmt.Sprintf("%s: %s", st.Name, st.LastError))
		}
	}
	const most = 8
	if len(parts) > most {
		parts = append(parts[:most], fmt.Sprintf("and %d more", len(parts)-most))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; failing: " + strings.Join(parts, "; ")
}
