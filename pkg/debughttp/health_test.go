package debughttp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/observe"
)

// healthObserver is fakeObserver telling a fixed health.
type healthObserver struct {
	fakeObserver
	h observe.Health
}

func (o healthObserver) Health() observe.Health { return o.h }

// noHealth is an Observer that tells no health.
type noHealth struct{ fakeObserver }

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(b)
}

// TestHealthPages: /readyz and /healthz answer 200 with "ready" / "live",
// or 503 with the checks that fail, one per line, naming what is not ready
// or not moving and why; ?format=json serves the observe.Health; an
// Observer that tells no health is 501.
func TestHealthPages(t *testing.T) {
	notReady := observe.Health{Live: true, NotReady: []observe.HealthCheck{
		{Controller: "LinkApply", Reason: "catching up with the first listing of its inputs: 2 items due, 1 in flight"},
	}}
	h := New(healthObserver{h: notReady})
	code, body := get(t, h, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not ready\n  controller LinkApply: catching up with the first listing of its inputs: 2 items due, 1 in flight\n", body)
	code, body = get(t, h, "/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "live\n", body)
	code, body = get(t, h, "/readyz?format=json")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	var got observe.Health
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, notReady, got)

	notLive := observe.Health{Ready: true, NotLive: []observe.HealthCheck{{Kind: "Links.net(network)", Reason: "its watch has been down for 2m0s: closed"}}}
	code, body = get(t, New(healthObserver{h: notLive}), "/healthz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "not live\n  kind Links.net(network): its watch has been down for 2m0s: closed\n", body)

	code, _ = get(t, New(noHealth{}), "/readyz")
	assert.Equal(t, http.StatusNotImplemented, code)
}
