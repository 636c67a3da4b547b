package cdp_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/internal/cdp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const page = `<!DOCTYPE html><html><body>
<p id="n">0</p><button id="b" onclick="document.getElementById('n').textContent = 'clicked'">b</button>
<script>setTimeout(() => document.body.setAttribute("data-late", "yes"), 200);</script>
</body></html>`

// TestBrowserOverThePipe drives a real headless Chromium against a page
// served on loopback: navigate, evaluate, wait for a DOM change, click,
// screenshot.
func TestBrowserOverThePipe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()

	b, err := cdp.Start(t.TempDir(), 800, 600)
	require.NoError(t, err)
	defer func() { assert.NoError(t, b.Close()) }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	p, err := b.NewPage(ctx)
	require.NoError(t, err)
	require.NoError(t, p.Navigate(ctx, srv.URL))
	var text string
	require.NoError(t, p.Evaluate(ctx, `document.getElementById("n").textContent`, &text))
	assert.Equal(t, "0", text)
	require.NoError(t, p.WaitFor(ctx, `document.body.dataset.late === "yes"`))
	require.NoError(t, p.Click(ctx, "#b"))
	require.NoError(t, p.Evaluate(ctx, `document.getElementById("n").textContent`, &text))
	assert.Equal(t, "clicked", text)
	assert.ErrorContains(t, p.Click(ctx, "#nope"), "no element matches")
	assert.ErrorContains(t, p.Evaluate(ctx, `(() => { throw new Error("boom") })()`, nil), "boom")

	png, err := p.Screenshot(ctx)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")))
	require.NoError(t, os.WriteFile(filepath.Join(t.TempDir(), "page.png"), png, 0o644))

	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	assert.ErrorIs(t, p.WaitFor(short, `false`), context.DeadlineExceeded)
}
