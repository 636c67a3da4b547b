package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/netip"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// waitFor is the deadline of every condition a test waits for: generous,
// since the machine running the tests may be slow and shared.
const waitFor = 20 * time.Second

// syncBuffer is a bytes.Buffer safe for concurrent writes and reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // protected by mu
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startDaemon runs a daemon for cfg until the test ends, and returns it
// once it is ready, with its log.
func startDaemon(t *testing.T, cfg config) (*daemon, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	d, err := newDaemon(cfg, out)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error // written before done is closed
	go func() {
		defer close(done)
		runErr = d.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
			assert.NoError(t, runErr, "Run returns nil after a cancel")
		case <-time.After(waitFor):
			t.Error("Run did not return after cancel")
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", out.String())
		}
	})
	select {
	case <-d.Ready():
	case <-done:
		t.Fatalf("Run failed at start: %v", runErr)
	case <-time.After(waitFor):
		t.Fatal("daemon not ready")
	}
	return d, out
}

// snapshot is the demo resources of a state, by kind, as sorted IDs and
// typed values.
type snapshot struct {
	specs     map[string]*netres.LinkSpec
	kernel    map[string]*netres.KernelLink
	statuses  map[string]*netres.LinkStatus
	addresses map[string]*netres.AddressSpec
	routes    map[string]*netres.RouteSpec
	resolver  *netres.ResolverConfig
}

func byID[T typed.ResourceWithDefinition](ctx context.Context, st state.State) (map[string]T, error) {
	l, err := safe.StateListAll[T](ctx, st)
	if err != nil {
		return nil, err
	}
	out := make(map[string]T, l.Len())
	for r := range l.All() {
		out[r.Metadata().ID()] = r
	}
	return out, nil
}

func takeSnapshot(t *testing.T, st state.State) snapshot {
	t.Helper()
	ctx := t.Context()
	var s snapshot
	var err error
	s.specs, err = byID[*netres.LinkSpec](ctx, st)
	require.NoError(t, err)
	s.kernel, err = byID[*netres.KernelLink](ctx, st)
	require.NoError(t, err)
	s.statuses, err = byID[*netres.LinkStatus](ctx, st)
	require.NoError(t, err)
	s.addresses, err = byID[*netres.AddressSpec](ctx, st)
	require.NoError(t, err)
	s.routes, err = byID[*netres.RouteSpec](ctx, st)
	require.NoError(t, err)
	s.resolver, err = safe.StateGet[*netres.ResolverConfig](ctx, st, resource.NewPointer(netres.Namespace, netres.ResolverConfigType, netres.ResolverConfigID))
	if !state.IsNotFoundError(err) {
		require.NoError(t, err)
	}
	return s
}

func ids[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (s snapshot) servers() []string {
	if s.resolver == nil {
		return nil
	}
	var out []string
	for _, a := range s.resolver.TypedSpec().Servers {
		out = append(out, a.String())
	}
	return out
}

// orphans lists every resource whose owner-side input is gone: an address
// without its link's status and spec, a route without the address it goes
// through, a status without its spec, resolver servers of no link that is
// up.
func (s snapshot) orphans() []string {
	var out []string
	for id := range s.statuses {
		if _, ok := s.specs[id]; !ok {
			out = append(out, "LinkStatus "+id+" has no LinkSpec")
		}
	}
	for id, a := range s.addresses {
		link := a.TypedSpec().Link
		if _, ok := s.statuses[link]; !ok {
			out = append(out, "AddressSpec "+id+" has no LinkStatus "+link)
		}
		if _, ok := s.specs[link]; !ok {
			out = append(out, "AddressSpec "+id+" has no LinkSpec "+link)
		}
	}
	for id, r := range s.routes {
		rs := r.TypedSpec()
		if !slices.ContainsFunc(ids(s.addresses), func(aid string) bool {
			a := s.addresses[aid].TypedSpec()
			return a.Link == rs.Link && a.Address.Addr() == rs.Source && a.Address.Contains(rs.Gateway)
		}) {
			out = append(out, "RouteSpec "+id+" has no address it goes through")
		}
	}
	upDNS := map[netip.Addr]bool{}
	for id, st := range s.statuses {
		if spec, ok := s.specs[id]; ok && st.TypedSpec().Up {
			for _, a := range spec.TypedSpec().DNSServers {
				upDNS[a] = true
			}
		}
	}
	if s.resolver != nil {
		for _, a := range s.resolver.TypedSpec().Servers {
			if !upDNS[a] {
				out = append(out, "ResolverConfig server "+a.String()+" belongs to no link that is up")
			}
		}
	}
	return out
}

// eventually waits until cond holds, checking it now and after every
// change of a demo resource (runtimetest.AssertState: a watch with a
// deadline, no polling); on failure it reports the last reason.
func eventually(t *testing.T, d *daemon, what string, cond func() (bool, string)) {
	t.Helper()
	runtimetest.AssertState(t, d.state, netres.Kinds(), func(_ context.Context, asrt *assert.Assertions) {
		ok, why := cond()
		asrt.True(ok, what+": "+why)
	})
}

// get fetches url (without keep-alive, so that no connection outlives the
// test) and returns the response and its body.
func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: waitFor}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// linesWith returns the log lines that contain every one of subs, in order.
func linesWith(log string, subs ...string) []string {
	var out []string
	for line := range strings.Lines(log) {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// process is a process a test started: done is closed once it exited,
// with err its Wait's result.
type process struct {
	done chan struct{}
	err  error // written before done is closed
}

// startProcess starts cmd; the process is killed, and waited for, when
// the test ends.
func startProcess(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	require.NoError(t, cmd.Start())
	p := &process{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// lineWatcher is a writer that keeps what is written and sends the first
// submatch of re in each complete line to found (dropped when found is
// full).
type lineWatcher struct {
	syncBuffer
	re      *regexp.Regexp
	found   chan string
	partial []byte // of the writer's goroutine (exec copies on one)
}

func newLineWatcher(re *regexp.Regexp) *lineWatcher {
	return &lineWatcher{re: re, found: make(chan string, 1)}
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return n, err
		}
		if m := w.re.FindSubmatch(w.partial[:i]); m != nil {
			select {
			case w.found <- string(m[1]):
			default:
			}
		}
		w.partial = w.partial[i+1:]
	}
}
