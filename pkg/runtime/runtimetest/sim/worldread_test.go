package sim_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// gauge writes the C "gauge" with what read returns, on each wake-up of
// the Runtime (its start; it reads no A; unless notifiedOnly) and on each
// signal of notify (the world's thermometer).
type gauge struct {
	notify       <-chan struct{}
	read         func() int
	notifiedOnly bool
}

func (gauge) Name() string               { return "gauge" }
func (gauge) Inputs() []controller.Input { return nil }
func (gauge) Outputs() []controller.Output {
	return []controller.Output{{Type: CDef{}.Definition().Type, Kind: controller.OutputExclusive}}
}

func (g gauge) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
			if g.notifiedOnly {
				continue
			}
		case <-g.notify:
		}
		n := g.read()
		if err := safe.WriterModify(ctx, r, typed.NewDefault[NumSpec, CDef]("gauge", NumSpec{}), func(c *C) error {
			c.TypedSpec().N = n
			return nil
		}); err != nil {
			return err
		}
	}
}

const temperature = "temperature"

// TestRecording_AWorldReadReturnsWhatTheRecordedDaemonRead (recording
// rule RC12, World.Observed): a controller that reads the world (a
// thermometer) commits what it read; the recording keeps each read's
// value, and the replay's fake world, which knows only the temperature
// at the end, returns them to the controller's reads, each where it was
// read: the replay makes the same commits as the recording (5, then 7;
// the fake alone would make one).
func TestRecording_AWorldReadReturnsWhatTheRecordedDaemonRead(t *testing.T) {
	g := recordGauge(t, false)
	for _, v := range []int64{5, 7} {
		g.value.Store(v)
		g.rec.Act("the temperature changed")
		g.notify <- struct{}{}
		gaugeIs(t, g.env.State, int(v))
	}
	r, reg := g.take(t), g.reg
	reads := 0
	for _, c := range r.Changes {
		if c.By == recording.ByWorld && c.Op == recording.OpRead {
			reads++
		}
	}
	require.Equal(t, 2, reads, "the recording holds the two reads of the temperature")

	res, err := sim.Replay(t, thermometer(reg, r, false), "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure, "%s", res)
}

// thermometer is the scenario of a recording of gauge (reading on its
// notifications only when notifiedOnly): its world is a thermometer that
// reads 7 (the temperature at the recording's end: what runs other than
// the reference run read), unless the recording says what was read.
func thermometer(reg *codec.Registry, rec *recording.Recording, notifiedOnly bool) sim.Scenario {
	return thermometerSignalling(reg, rec, notifiedOnly, false)
}

// thermometerSignalling is thermometer whose world signals once as the
// run starts when atStart is set (its signals then coalesce into one).
func thermometerSignalling(reg *codec.Registry, rec *recording.Recording, notifiedOnly, atStart bool) sim.Scenario {
	return sim.Scenario{
		Name:  "thermometer recorded",
		Codec: reg,
		Setup: func(w *sim.World) (sim.System, error) {
			notify := make(chan struct{}, 1)
			if atStart {
				notify <- struct{}{}
			}
			relayed := w.Relay("thermometer", notify)
			observed := w.Observed(temperature, "gauge")
			read := func() int {
				if b, ok := observed(); ok {
					n, err := strconv.Atoi(string(b))
					if err == nil {
						return n
					}
				}
				return 7
			}
			return sim.System{
				Register: func(e controller.Engine) error {
					return e.RegisterController(gauge{notify: relayed, read: read, notifiedOnly: notifiedOnly})
				},
				Actions: []sim.Action{{Name: "the temperature changed", Named: true, Do: func(context.Context) error {
					select {
					case notify <- struct{}{}:
					default:
					}
					return nil
				}}},
			}, nil
		},
		Recording: rec, MatchRecording: true, Seeds: 1,
	}
}

// gaugeIs waits until the C "gauge" is n.
func gaugeIs(t *testing.T, st interface {
	Get(context.Context, resource.Pointer, ...state.GetOption) (resource.Resource, error)
}, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := st.Get(context.Background(), resource.NewPointer(ns, CDef{}.Definition().Type, "gauge"))
		if err == nil && c.(*C).TypedSpec().N == n {
			return
		}
		require.False(t, time.Now().After(deadline), "the gauge never read %d", n)
		time.Sleep(5 * time.Millisecond) // the gauge's controller runs on its own
	}
}

// TestRecording_AWorldActionWaitsForTheReadsRecordedBeforeIt (World.Observed):
// the temperature changes (5) and the gauge reads it, and changes again (7)
// before the gauge wrote what it read; the gauge then reads again. The
// replay takes the second change only once the gauge read the first: taken
// at once, its signal would coalesce with the first's, and the gauge
// would read once, for the two reads recorded (the commit of 7 missing).
func TestRecording_AWorldActionWaitsForTheReadsRecordedBeforeIt(t *testing.T) {
	reg := pairAndSumCodec(t)
	var value atomic.Int64
	var recp atomic.Pointer[recording.Recorder]
	var holding atomic.Bool
	notify, held, hold := make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	read := func() int {
		v := int(value.Load())
		if rec := recp.Load(); rec != nil {
			rec.Observe(temperature, []byte(strconv.Itoa(v)))
		}
		if holding.CompareAndSwap(true, false) {
			close(held)
			<-hold
		}
		return v
	}
	value.Store(1)
	env := runtimetest.Start(t, runtimetest.WithControllers(gauge{notify: notify, read: read, notifiedOnly: true}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notify <- struct{}{}
	gaugeIs(t, env.State, 1)
	rec := startRecorder(t, ctx, env, reg, recording.WithKinds(resource.NewKind(ns, ADef{}.Definition().Type), resource.NewKind(ns, CDef{}.Definition().Type)))
	recp.Store(rec)

	value.Store(5)
	holding.Store(true)
	rec.Act("the temperature changed")
	notify <- struct{}{}
	select {
	case <-held: // the gauge read 5
	case <-time.After(time.Minute): // a deadline, not a wait
		t.Fatal("the gauge never read the temperature")
	}
	value.Store(7)
	rec.Act("the temperature changed")
	notify <- struct{}{}
	close(hold)
	gaugeIs(t, env.State, 7)
	runtimetest.Settle(t, env.Runtime)
	require.NoError(t, rec.Sync(ctx))
	r, err := rec.Take()
	require.NoError(t, err)
	var order []string
	for _, c := range r.Changes {
		switch {
		case c.By == recording.ByWorld && c.Op == recording.OpRead:
			order = append(order, "read "+string(c.Value))
		case c.By == recording.ByWorld:
			order = append(order, "change")
		default:
			order = append(order, "commit")
		}
	}
	require.Equal(t, []string{"change", "read 5", "change", "commit", "read 7", "commit"}, order)

	res, err := sim.Replay(t, thermometer(reg, r, true), "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure, "%s", res)
}

// TestRecording_AReaderTheReplaysWorldDoesNotSignalIsSignalledAgain
// (World.Relay, World.Observed): the recorded daemon's world signalled
// the gauge twice on its own (no action the recorder noted: as a kernel
// signals on each link the daemon itself creates), and the gauge read 5
// and then 7. The replay's world signals once (its two signals coalesced);
// while the recording's next commit is the gauge's, made after a read it
// has not been handed, and the gauge waits, the replay signals the
// world's relays again: the gauge reads twice and the replay makes the
// recording's two commits.
func TestRecording_AReaderTheReplaysWorldDoesNotSignalIsSignalledAgain(t *testing.T) {
	g := recordGauge(t, true)
	for _, v := range []int64{5, 7} {
		g.value.Store(v)
		g.notify <- struct{}{} // the world's own signal: no action noted
		gaugeIs(t, g.env.State, int(v))
	}
	r, reg := g.take(t), g.reg
	for _, c := range r.Outside() {
		require.Equal(t, recording.OpRead, c.Op, "no action was noted: %+v", c)
	}

	res, err := sim.Replay(t, thermometerSignalling(reg, r, true, true), "seed=1")
	require.NoError(t, err)
	require.Nil(t, res.Failure, "%s", res)
}

// gaugeRecording is a gauge running on a Runtime, recorded from the
// moment it read 1: its world's temperature is value, notify signals it.
type gaugeRecording struct {
	reg    *codec.Registry
	env    *runtimetest.Env
	value  atomic.Int64
	notify chan struct{}
	rec    *recording.Recorder
	ctx    context.Context
}

// recordGauge starts a gauge (reading on its notifications only when
// notifiedOnly) and its recorder once it read 1.
func recordGauge(t *testing.T, notifiedOnly bool) *gaugeRecording {
	g := &gaugeRecording{reg: pairAndSumCodec(t), notify: make(chan struct{}, 1)}
	var recp atomic.Pointer[recording.Recorder]
	read := func() int {
		v := int(g.value.Load())
		if rec := recp.Load(); rec != nil {
			rec.Observe(temperature, []byte(strconv.Itoa(v)))
		}
		return v
	}
	g.value.Store(1)
	g.env = runtimetest.Start(t, runtimetest.WithControllers(gauge{notify: g.notify, read: read, notifiedOnly: notifiedOnly}))
	ctx, cancel := context.WithCancel(context.Background())
	g.ctx = ctx
	if notifiedOnly {
		g.notify <- struct{}{}
	}
	gaugeIs(t, g.env.State, 1)
	g.rec = startRecorder(t, ctx, g.env, g.reg, recording.WithKinds(resource.NewKind(ns, ADef{}.Definition().Type), resource.NewKind(ns, CDef{}.Definition().Type)))
	t.Cleanup(cancel) // before startRecorder's, which waits for the recorder's Run to return
	recp.Store(g.rec)
	return g
}

// take takes the recording once the gauge settled.
func (g *gaugeRecording) take(t *testing.T) *recording.Recording {
	t.Helper()
	runtimetest.Settle(t, g.env.Runtime)
	require.NoError(t, g.rec.Sync(g.ctx))
	r, err := g.rec.Take()
	require.NoError(t, err)
	return r
}
