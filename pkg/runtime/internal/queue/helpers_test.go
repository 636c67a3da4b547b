package queue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/internal/retry"
)

// testOpts are the backoff bounds of most tests: 100ms, 200ms, 400ms, 800ms,
// then 1s.
var testOpts = backoff(100*time.Millisecond, time.Second)

// none is the note of the tests' queues: no notes.
type none = struct{}

// backoff is the retry policy with the backoff bounds initial and max.
func backoff(initial, maxDelay time.Duration) retry.Policy {
	return retry.Policy{Backoff: retry.Backoff{Initial: initial, Max: maxDelay}}
}

// horizon is how long (in virtual time) a test waits for a key before it
// concludes that none will come.
const horizon = time.Hour

// get takes the next key, failing the test if none is due within horizon,
// and returns it with the (virtual) time Get blocked.
func get[K comparable](t *testing.T, q *Queue[K, none]) (K, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), horizon)
	defer cancel()
	start := time.Now()
	k, ok := q.Get(ctx)
	require.True(t, ok, "no key became due within %v", horizon)
	return k, time.Since(start)
}

// getAfter asserts that the next key is want and that Get blocked exactly
// wait.
func getAfter[K comparable](t *testing.T, q *Queue[K, none], want K, wait time.Duration) {
	t.Helper()
	k, d := get(t, q)
	assert.Equal(t, want, k)
	assert.Equal(t, wait, d, "Get of %v blocked %v, want %v", k, d, wait)
}

// getNow asserts that the next key is want and is due at once.
func getNow[K comparable](t *testing.T, q *Queue[K, none], want K) {
	t.Helper()
	getAfter(t, q, want, 0)
}

// assertNothingDue asserts that Get finds no key within horizon.
func assertNothingDue[K comparable](t *testing.T, q *Queue[K, none]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), horizon)
	defer cancel()
	k, ok := q.Get(ctx)
	assert.False(t, ok, "Get returned %v, want nothing due", k)
}

// getAsync starts a Get in a goroutine and returns a channel that receives
// its result.
func getAsync[K comparable](ctx context.Context, q *Queue[K, none]) <-chan getResult[K] {
	ch := make(chan getResult[K], 1)
	go func() {
		k, ok := q.Get(ctx)
		ch <- getResult[K]{k: k, ok: ok, at: time.Now()}
	}()
	return ch
}

// getResult is the outcome of an asynchronous Get.
type getResult[K comparable] struct {
	k  K
	ok bool
	at time.Time
}
