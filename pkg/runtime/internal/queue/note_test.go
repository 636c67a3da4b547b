package queue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNotes_FollowTheKey: a key's note collects what AddNoted says while
// the key waits, is handed out (and cleared) by GetNoted, collects the
// adds made while the key is in flight for its next run, is settled by
// CompleteNoted only when the key stays in the queue, and goes with the
// key when it is forgotten.
func TestNotes_FollowTheKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, []string](testOpts)
		note := func(s string) func(*[]string) { return func(n *[]string) { *n = append(*n, s) } }
		kept := func(n *[]string, c Completion) { *n = append(*n, "kept "+c.Delay.String()) }

		q.AddNoted("a", note("created"))
		q.AddNoted("a", note("updated"))
		k, n, _, ok := q.GetNoted(t.Context())
		require.True(t, ok)
		assert.Equal(t, "a", k)
		assert.Equal(t, []string{"created", "updated"}, n)

		q.AddNoted("a", note("updated while running"))
		q.CompleteNoted("a", Slot{}, Failure(), kept)
		_, n, _, _ = q.GetNoted(t.Context())
		assert.Equal(t, []string{"updated while running", "kept 0s"}, n, "due now: a change came during the run")

		q.CompleteNoted("a", Slot{}, Failure(), kept)
		_, n, _, _ = q.GetNoted(t.Context())
		assert.Equal(t, []string{"kept 200ms"}, n, "retried after its backoff")

		q.CompleteNoted("a", Slot{}, Success(), kept)
		q.AddBatchNoted([]string{"b", "a"}, func(i int, n *[]string) { *n = append(*n, []string{"b0", "a1"}[i]) })
		_, n, _, _ = q.GetNoted(t.Context())
		assert.Equal(t, []string{"b0"}, n)
		_, n, _, _ = q.GetNoted(t.Context())
		assert.Equal(t, []string{"a1"}, n, "forgotten after its success: a fresh note")

		q.ShutDown()
		q.AddNoted("c", func(*[]string) { t.Error("noted after ShutDown") })
		q.CompleteNoted("a", Slot{}, Failure(), func(*[]string, Completion) { t.Error("settled after ShutDown") })
		time.Sleep(time.Second)
	})
}
