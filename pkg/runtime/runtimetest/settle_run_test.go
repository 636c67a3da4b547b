package runtimetest_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// endingController is a Controller whose Run takes its start event, waits
// for gate to close and then returns what end returns.
type endingController struct {
	gate chan struct{}
	end  func(ctx context.Context, r controller.Runtime) error
}

func (c *endingController) Name() string { return "ending" }
func (c *endingController) Inputs() []controller.Input {
	k := typed.Kind[*Number]()
	return []controller.Input{{Namespace: k.Namespace(), Type: k.Type(), Kind: controller.InputWeak}}
}
func (c *endingController) Outputs() []controller.Output { return nil }
func (c *endingController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	select {
	case <-r.EventCh():
	case <-ctx.Done():
		return nil
	}
	select {
	case <-c.gate:
	case <-ctx.Done():
		return nil
	}
	return c.end(ctx, r)
}

// pausingCore is a zap core that, once armed, holds the first entry
// written until release is closed: it stops the goroutine that logs there.
type pausingCore struct {
	zapcore.LevelEnabler
	armed   *atomic.Bool
	paused  chan struct{} // closed when an entry is held
	release chan struct{}
}

func (c pausingCore) With([]zapcore.Field) zapcore.Core { return c }
func (c pausingCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, c)
}
func (c pausingCore) Write(zapcore.Entry, []zapcore.Field) error {
	if c.armed.CompareAndSwap(true, false) {
		close(c.paused)
		<-c.release
	}
	return nil
}
func (c pausingCore) Sync() error { return nil }

// TestSettleIsWokenWhenARunReturns: a Controller whose Run returns in the
// middle of a pass is busy until the Runtime has decided what follows (a
// restart after the backoff, a parked controller, a stopped one); a wait
// for quiet that saw it busy is woken once it is not, though nothing else
// happens in the Runtime. The Runtime logs how Run ended before it
// decides: the test holds it there, so that the wait has seen the
// controller busy after Run returned, whatever the goroutines' timing.
func TestSettleIsWokenWhenARunReturns(t *testing.T) {
	for name, end := range map[string]func(ctx context.Context, r controller.Runtime) error{
		"a failure waits out the restart backoff": func(context.Context, controller.Runtime) error { return errors.New("broken") },
		"a denial parks the controller": func(ctx context.Context, r controller.Runtime) error {
			// Labels are not an output of the controller (rule C3).
			return r.Modify(ctx, typed.NewDefault[LabelSpec, LabelDef]("x", LabelSpec{}), func(resource.Resource) error { return nil })
		},
		"a nil error stops the controller": func(context.Context, controller.Runtime) error { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := &endingController{gate: make(chan struct{}), end: end}
				logs := pausingCore{LevelEnabler: zapcore.DebugLevel, armed: new(atomic.Bool), paused: make(chan struct{}), release: make(chan struct{})}
				e := runtimetest.Start(t, runtimetest.WithControllers(c), runtimetest.WithLogger(zap.New(logs)))
				synctest.Wait() // Run took its start event and waits at the gate: busy
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				idle := make(chan error, 1)
				go func() { idle <- runtimetest.RealTimeWaitIdle(ctx, e.Runtime) }()
				synctest.Wait() // the wait saw the controller busy and waits for a notification
				select {
				case err := <-idle:
					t.Fatalf("the Runtime was idle with Run in its pass: %v", err)
				default:
				}
				logs.armed.Store(true)
				close(c.gate)
				synctest.Wait() // Run returned; the Runtime logs how
				select {
				case <-logs.paused:
				default:
					t.Fatal("the Runtime logged nothing when Run returned")
				}
				close(logs.release)
				synctest.Wait() // the Runtime has nothing more to do
				select {
				case err := <-idle:
					require.NoError(t, err)
				default:
					t.Fatalf("the wait for quiet was not woken when Run returned: %s", e.Runtime.Observe().Activity(ctx))
				}
			})
		})
	}
}
