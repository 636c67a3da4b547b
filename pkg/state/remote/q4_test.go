package remote_test

import (
	"testing"

	"github.com/resgraph/resgraph/pkg/internal/lagwatch"
)

// TestQ4Extended_RelabelBehindRouting: over a remote client, a Reconcile
// that read a mapped input before the Runtime routed it is requeued when
// the input is relabelled, though the lagging watch delivers the creation
// and the relabel coalesced (lagwatch.RelabelBehindRouting).
func TestQ4Extended_RelabelBehindRouting(t *testing.T) {
	st, _ := served(t, "unix")
	lagwatch.RelabelBehindRouting(t, st)
}
