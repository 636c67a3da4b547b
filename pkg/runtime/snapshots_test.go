package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The mutation detector names the culprit (rule S7, issue 19): a shared
// snapshot the Runtime hands a controller (a read-only read through its
// runtime, a transform's input) and the controller changes is reported
// naming that controller, recorded as its last error and raised in its
// goroutine — when its pass or item ends, or, when a write of the
// resource found the change first, at its next end — never in the
// goroutine of whoever writes the resource next.

// mutationReport is one call of the detector's report: the change and
// the goroutine that raised it.
type mutationReport struct {
	err       *inmem.MutationError
	goroutine string
	stack     string
}

// mutationReports collects a detector's reports.
type mutationReports struct {
	mu  sync.Mutex
	got []mutationReport
}

func (m *mutationReports) report(err error) {
	var me *inmem.MutationError
	if !errors.As(err, &me) {
		panic(err)
	}
	stack := string(goroutineStack())
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, mutationReport{err: me, goroutine: goroutineOf(stack), stack: stack})
}

func (m *mutationReports) take() []mutationReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	got := m.got
	m.got = nil
	return got
}

// goroutineStack returns the stack of the calling goroutine.
func goroutineStack() []byte {
	buf := make([]byte, 64<<10)
	return buf[:goruntime.Stack(buf, false)]
}

// goroutineOf returns the "goroutine N" header of a stack.
func goroutineOf(stack string) string {
	head, _, _ := strings.Cut(stack, " [")
	return head
}

// detectorState returns an inmem state whose detector reports into m.
func (m *mutationReports) state() state.State {
	return inmem.NewState(inmem.WithMutationDetector(m.report))
}

// mutatingQController is a QController of typeA that reads its input
// read-only and changes it (the mistake the detector is for); gate, when
// not nil, holds Reconcile after the change until it is closed.
func mutatingQController(name string, gate <-chan struct{}) *funcQController {
	return &funcQController{name: name, settings: primaryOf(typeA),
		reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
			in, err := r.Get(ctx, p, state.WithReadOnlyGet())
			if err != nil {
				return nil
			}
			in.(*Pair).TypedSpec().B = 99
			if gate != nil {
				<-gate
			}
			return nil
		}}
}

// TestS7_MutationRaisedInTheQControllersWorker: a QController that
// changes the input it read read-only is reported when its item ends,
// naming it, in its worker's goroutine (not the test's, which writes the
// input next), and the change is its last error; it is reported once.
func TestS7_MutationRaisedInTheQControllersWorker(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rep := &mutationReports{}
		st := rep.state()
		e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(mutatingQController("mutator", nil)))
		mustCreate(t, st, newPair(typeA, "a", 1))
		synctest.Wait()

		got := rep.take()
		require.Len(t, got, 1)
		assert.Equal(t, []string{"mutator"}, got[0].err.Holders)
		assert.Equal(t, "spec.B", got[0].err.Path)
		assert.Contains(t, got[0].err.Error(), "handed to mutator")
		assert.NotEqual(t, goroutineOf(string(goroutineStack())), got[0].goroutine, "not the writer's goroutine")
		assert.Contains(t, got[0].stack, "qrunner.(*Runner).worker", "the controller's worker")
		assert.Contains(t, statusOf(t, e.Runtime, "mutator").LastError, "handed to mutator")

		// The test's next write of the input finds the change reported.
		require.NoError(t, st.Modify(context.Background(), newPair(typeA, "a", 0), func(r resource.Resource) error {
			r.(*Pair).TypedSpec().A = 2
			return nil
		}))
		synctest.Wait()
		for _, r := range rep.take() {
			assert.NotEqual(t, uint64(1), r.err.Version.Value(), "version 1 reported once")
		}
	})
}

// TestS7_MutationFoundByAWriteGoesToTheHolder: when a write of the
// resource finds the change before the controller's item ends, the writer
// (here the test) does not raise it: the controller does, in its worker,
// once its item ends.
func TestS7_MutationFoundByAWriteGoesToTheHolder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rep := &mutationReports{}
		st := rep.state()
		gate := make(chan struct{})
		e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(mutatingQController("holder", gate)))
		mustCreate(t, st, newPair(typeA, "a", 1))
		synctest.Wait() // Reconcile changed version 1 and waits

		require.NoError(t, st.Modify(context.Background(), newPair(typeA, "a", 0), func(r resource.Resource) error {
			r.(*Pair).TypedSpec().A = 2
			return nil
		}))
		assert.Empty(t, rep.take(), "the writer found it and handed it over")

		close(gate)
		synctest.Wait()
		got := rep.take()
		require.NotEmpty(t, got)
		assert.Equal(t, uint64(1), got[0].err.Version.Value())
		assert.Equal(t, []string{"holder"}, got[0].err.Holders)
		assert.Contains(t, got[0].stack, "qrunner.(*Runner).worker")
		assert.Contains(t, statusOf(t, e.Runtime, "holder").LastError, "handed to holder")
	})
}

// TestS7_MutationRaisedInTheControllersPass: a Controller that changes a
// snapshot it listed read-only is reported when its pass ends (its next
// EventCh call), in its Run's goroutine, naming it; the pass is failed
// (its last error), not a recovery.
func TestS7_MutationRaisedInTheControllersPass(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rep := &mutationReports{}
		st := rep.state()
		ctrl := &funcController{name: "lister", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					l, err := r.List(ctx, kind(typeA), state.WithReadOnlyList())
					if err != nil {
						return err
					}
					for _, item := range l.Items {
						item.Metadata().Labels().Set("touched", "yes")
					}
				}
			}}
		e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
		mustCreate(t, st, newPair(typeA, "a", 1))
		synctest.Wait()

		got := rep.take()
		require.Len(t, got, 1)
		assert.Equal(t, []string{"lister"}, got[0].err.Holders)
		assert.Equal(t, "metadata.labels", got[0].err.Path)
		assert.Contains(t, got[0].stack, "EventCh", "raised when the pass ended, in Run's goroutine")
		assert.NotEqual(t, goroutineOf(string(goroutineStack())), got[0].goroutine)
		status := statusOf(t, e.Runtime, "lister")
		assert.Contains(t, status.LastError, "handed to lister")
		assert.False(t, status.Recovered, "the pass failed")
	})
}

// TestS7_MutationOfADestroyedInputsLastVersion: the last version of a
// destroyed mapped input, which MapInput receives (rule Q4), is a
// snapshot handed to the QController: a MapInput that changes it is
// reported when its item ends, naming it, in its worker.
func TestS7_MutationOfADestroyedInputsLastVersion(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rep := &mutationReports{}
		st := rep.state()
		// The change waits for the destroy to return: the writer's own
		// checks of the destroyed version are done by then (a change
		// racing with them is a data race the race detector reports).
		destroyed := make(chan struct{})
		ctrl := &funcQController{name: "mapper",
			settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeB, controller.InputQMapped)}},
			mapInput: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
				if gone, ok := controller.AsDestroyed(p); ok {
					<-destroyed
					gone.Last().(*Pair).TypedSpec().A = -1
				}
				return nil, nil
			}}
		start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))
		mustCreate(t, st, newPair(typeB, "b", 1))
		synctest.Wait()
		require.NoError(t, st.Destroy(context.Background(), ptr(typeB, "b")))
		close(destroyed)
		synctest.Wait()

		got := rep.take()
		require.Len(t, got, 1)
		assert.Equal(t, []string{"mapper"}, got[0].err.Holders)
		assert.Equal(t, "spec.A", got[0].err.Path)
		assert.Contains(t, got[0].stack, "qrunner.(*Runner).worker")
	})
}

// mutationChildEnv runs TestS7_DefaultReportPanicsInTheController as the
// child process it starts.
const mutationChildEnv = "RESGRAPH_TEST_MUTATION_CHILD"

// TestS7_DefaultReportPanicsInTheController: with the detector's default
// report (a test binary's inmem.NewState), a controller's change of a
// snapshot crashes the test with a panic raised in the controller's
// worker, naming the controller — the test sees it, and it does not point
// at the test's own writes. The crash happens in a child process (this
// test binary, run again).
func TestS7_DefaultReportPanicsInTheController(t *testing.T) {
	if os.Getenv(mutationChildEnv) == "1" {
		mutationChild(t)
		return
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestS7_DefaultReportPanicsInTheController$", "-test.count=1")
	cmd.Env = append(os.Environ(), mutationChildEnv+"=1", "RESGRAPH_MUTATION_DETECTOR=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the child must crash:\n%s", out.String())
	text := out.String()
	assert.Contains(t, text, "panic: inmem: mutation detector")
	assert.Contains(t, text, "handed to culprit")
	panicking, _, _ := strings.Cut(text[strings.Index(text, "goroutine "):], "\n\n")
	assert.Contains(t, panicking, "qrunner.(*Runner).worker", "the panicking goroutine is the controller's worker:\n%s", text)
	assert.NotContains(t, panicking, "mutationChild", "not the test's goroutine")
}

// mutationChild is the child of TestS7_DefaultReportPanicsInTheController:
// it runs a controller that changes its input, then waits for the crash.
func mutationChild(t *testing.T) {
	st := inmem.NewState()
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.NewNop()),
		runtimetest.WithQControllers(mutatingQController("culprit", nil)))
	mustCreate(t, st, newPair(typeA, "a", 1))
	// The crash ends the process long before.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	<-ctx.Done()
	_ = e.Stop()
	t.Fatal("no crash")
}
