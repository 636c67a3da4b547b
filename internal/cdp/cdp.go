// Package cdp drives a headless Chromium for tests, over the DevTools
// protocol on a pipe (--remote-debugging-pipe: JSON messages ended by a
// NUL byte, the browser reading file descriptor 3 and writing 4), so that
// no websocket library is needed. It covers what the debug pages' browser
// tests use: open a page, wait for a condition in it, evaluate JavaScript,
// click, take a screenshot.
//
// The browser is Debian's chromium (the binary named by $RESGRAPH_CHROMIUM,
// else chromium or chromium-browser on the PATH), started offline and
// root-safe: headless, without sandbox, GPU, QUIC, first-run, background
// networking, component updates or sync, with a profile in a directory the
// caller owns.
package cdp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
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
	return "", errors.New("cdp: no chromium binary: install Debian's chromium package (apt-get install chromium, as .ci/run does) or set RESGRAPH_CHROMIUM")
}

// Browser is a running headless Chromium. Close it.
type Browser struct {
	cmd    *exec.Cmd
	toB    *os.File // our end of the browser's fd 3
	fromB  *os.File // our end of the browser's fd 4
	stderr *tailBuffer

	writeMu sync.Mutex
	mu      sync.Mutex
	// nextID, pending and events are protected by mu.
	nextID  int64
	pending map[int64]chan message
	events  []*eventWaiter
	// readErr is why the reader stopped; set before done is closed.
	readErr error
	done    chan struct{}
}

// message is a protocol message: a response (ID set) or an event (Method
// set).
type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// eventWaiter receives the first event of a method in a session.
type eventWaiter struct {
	method, session string
	ch              chan message
}

// Start starts Chromium with its profile in profileDir (which must exist
// and be the caller's to remove) and a window of width × height pixels.
// The browser runs until Close.
func Start(profileDir string, width, height int) (*Browser, error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	// Our write end feeds the browser's fd 3; its fd 4 feeds our read end.
	r3, w3, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	r4, w4, err := os.Pipe()
	if err != nil {
		return nil, errors.Join(err, r3.Close(), w3.Close())
	}
	cmd := exec.Command(bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
		"--remote-debugging-pipe", "--user-data-dir="+profileDir,
		fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	cmd.ExtraFiles = []*os.File{r3, w4} // fd 3 and fd 4
	stderr := &tailBuffer{max: 16 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("cdp: start %s: %w", bin, err), r3.Close(), w3.Close(), r4.Close(), w4.Close())
	}
	// The browser holds its ends now.
	_ = r3.Close()
	_ = w4.Close()
	b := &Browser{cmd: cmd, toB: w3, fromB: r4, stderr: stderr, pending: map[int64]chan message{}, done: make(chan struct{})}
	go b.read()
	return b, nil
}

// read dispatches the browser's messages until the pipe closes.
func (b *Browser) read() {
	sc := bufio.NewScanner(b.fromB)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch := b.pending[m.ID]; ch != nil {
				delete(b.pending, m.ID)
				ch <- m
			}
		} else if m.Method != "" {
			kept := b.events[:0]
			for _, w := range b.events {
				if w.method == m.Method && w.session == m.SessionID {
					w.ch <- m
					continue
				}
				kept = append(kept, w)
			}
			b.events = kept
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.readErr = sc.Err()
	if b.readErr == nil {
		b.readErr = errors.New("cdp: the browser closed its pipe")
	}
	b.mu.Unlock()
	close(b.done)
}

// call sends a command (in session, "" for the browser) and decodes its
// result into out (nil: ignored).
func (b *Browser) call(ctx context.Context, session, method string, params any, out any) error {
	ch := make(chan message, 1)
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	b.pending[id] = ch
	b.mu.Unlock()
	msg, err := json.Marshal(struct {
		ID        int64  `json:"id"`
		Method    string `json:"method"`
		Params    any    `json:"params,omitempty"`
		SessionID string `json:"sessionId,omitempty"`
	}{id, method, params, session})
	if err != nil {
		return err
	}
	b.writeMu.Lock()
	_, err = b.toB.Write(append(msg, 0))
	b.writeMu.Unlock()
	if err != nil {
		return fmt.Errorf("cdp: %s: %w%s", method, err, b.stderrTail())
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("cdp: %s: %s (code %d)", method, m.Error.Message, m.Error.Code)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("cdp: %s: %w%s", method, b.readErr, b.stderrTail())
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return fmt.Errorf("cdp: %s: %w", method, ctx.Err())
	}
}

// waitEvent registers for the next event of method in session; wait
// returns it.
func (b *Browser) waitEvent(session, method string) (wait func(context.Context) error) {
	w := &eventWaiter{method: method, session: session, ch: make(chan message, 1)}
	b.mu.Lock()
	b.events = append(b.events, w)
	b.mu.Unlock()
	return func(ctx context.Context) error {
		select {
		case <-w.ch:
			return nil
		case <-b.done:
			return fmt.Errorf("cdp: waiting for %s: %w", method, b.readErr)
		case <-ctx.Done():
			return fmt.Errorf("cdp: waiting for %s: %w", method, ctx.Err())
		}
	}
}

func (b *Browser) stderrTail() string {
	if s := strings.TrimSpace(b.stderr.String()); s != "" {
		return "\nchromium's stderr (tail):\n" + s
	}
	return ""
}

// Close closes the browser and waits for its process to exit (killing it
// after 10 s), and for the reader.
func (b *Browser) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-ctx.Done():
		_ = b.cmd.Process.Kill()
		err = <-exited
	}
	_ = b.toB.Close()
	<-b.done
	_ = b.fromB.Close()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // it was told to close
	}
	return err
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
