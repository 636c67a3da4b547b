// Package browsertest drives a real headless Chromium for the tests of the
// debug pages, with github.com/chromedp/chromedp: it starts the browser
// for a test, loads a page with the page's clock virtual, reads what the
// live graph page rendered, from its DOM and its geometry, and takes
// screenshots. Only tests import it.
//
// The browser is Debian's chromium (the binary named by $RESGRAPH_CHROMIUM,
// else chromium or chromium-browser on the PATH), started headless,
// without sandbox (tests may run as root) and GPU, with a profile in the
// test's temporary directory.
package browsertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Find returns the path of the Chromium binary, or an error that says how
// to install it.
func Find() (string, error) {
	if p := os.Getenv("RESGRAPH_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("browsertest: no chromium binary: run scripts/setup (it installs Debian's chromium package, as make test does) or set RESGRAPH_CHROMIUM")
}

// Start starts a headless Chromium with a viewport of width × height CSS
// pixels for the test and returns the context of its tab, for chromedp.Run and
// chromedp.Do. The browser stops when the test ends (before the test's
// leak checks run, since cleanups run first).
func Start(tb testing.TB, width, height int) context.Context {
	tb.Helper()
	bin, err := Find()
	if err != nil {
		tb.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(tb.TempDir()), chromedp.WindowSize(width, height),
		chromedp.Flag("hide-scrollbars", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("mute-audio", true), chromedp.Flag("font-render-hinting", "none"))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	tb.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first action starts the browser; it must not run under a
	// timeout (that would stop the browser with it). The viewport is the
	// whole window.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		tb.Fatalf("browsertest: start %s: %v", bin, err)
	}
	return ctx
}

// LoadUnderVirtualTime navigates the tab to url, then makes the page's
// clock virtual — time in the page (Date, timers) advances only when the
// page has nothing else to do and no request is pending, as in a headless
// screenshot run with a virtual time budget — and returns once the page
// has lived budget of virtual time. The real time that takes is the page's
// own work and its requests': a page polling every second under a budget
// of 3 s polls three times in a few hundred milliseconds.
func LoadUnderVirtualTime(ctx context.Context, url string, budget time.Duration) error {
	expired := chromedp.Events(ctx, emulation.VirtualTimeBudgetExpired)
	ms := float64(budget.Milliseconds())
	err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetVirtualTimePolicy, emulation.SetVirtualTimePolicyParams{
				Policy: emulation.VirtualTimePolicyPauseIfNetworkFetchesPending, Budget: &ms,
			})
			return err
		}),
	)
	if err != nil {
		return err
	}
	for _, err := range expired {
		return err
	}
	return ctx.Err()
}

// Screenshot returns a PNG of the tab's viewport.
func Screenshot(ctx context.Context) ([]byte, error) {
	return chromedp.Run(ctx, chromedp.CaptureScreenshot())
}
