package kernel

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestApplyLinkFailsTransientlyThenSucceeds(t *testing.T) {
	k := New(Config{FailFirst: 2})
	for i := range 2 {
		_, err := k.ApplyLink(context.Background(), "eth0", 1500)
		require.Error(t, err, "attempt %d", i+1)
		assert.True(t, errors.Is(err, ErrDeviceBusy), "attempt %d: %v", i+1, err)
		assert.Contains(t, err.Error(), "eth0")
	}
	assert.Empty(t, k.Links(), "a failed apply creates nothing")

	l, err := k.ApplyLink(context.Background(), "eth0", 1500)
	require.NoError(t, err)
	assert.Equal(t, "eth0", l.Name)
	assert.Equal(t, 1500, l.MTU)

	l2, err := k.ApplyLink(context.Background(), "eth0", 9000)
	require.NoError(t, err, "once created, apply never fails")
	assert.Equal(t, l.Index, l2.Index)
	assert.Equal(t, 9000, l2.MTU)
}

func TestNewLinkIsUpWithStableIdentity(t *testing.T) {
	k := New(Config{Seed: 7})
	a, err := k.ApplyLink(context.Background(), "eth0", 1500)
	require.NoError(t, err)
	b, err := k.ApplyLink(context.Background(), "eth1", 1500)
	require.NoError(t, err)
	assert.True(t, a.Up)
	assert.NotEqual(t, a.Index, b.Index)
	assert.NotEqual(t, a.HardwareAddr, b.HardwareAddr)

	other := New(Config{Seed: 7})
	c, err := other.ApplyLink(context.Background(), "eth0", 1500)
	require.NoError(t, err)
	assert.Equal(t, a.HardwareAddr, c.HardwareAddr, "same seed and name, same MAC")
}

func TestChangesSignalOnCoalescingChannel(t *testing.T) {
	k := New(Config{})
	_, err := k.ApplyLink(context.Background(), "eth0", 1500)
	require.NoError(t, err)
	require.True(t, k.SetCarrier("eth0", false))
	require.True(t, k.DeleteLink("eth0"))

	select {
	case <-k.Notify():
	default:
		t.Fatal("changes were not signalled")
	}
	select {
	case <-k.Notify():
		t.Fatal("three changes gave more than one pending signal")
	default:
	}

	_, err = k.ApplyLink(context.Background(), "eth1", 1500)
	require.NoError(t, err)
	<-k.Notify()
	_, err = k.ApplyLink(context.Background(), "eth1", 1500)
	require.NoError(t, err)
	select {
	case <-k.Notify():
		t.Fatal("an apply that changed nothing was signalled")
	default:
	}
}

func TestDeleteRestartsTransientFailures(t *testing.T) {
	k := New(Config{FailFirst: 1})
	_, err := k.ApplyLink(context.Background(), "eth0", 1500)
	require.Error(t, err)
	_, err = k.ApplyLink(context.Background(), "eth0", 1500)
	require.NoError(t, err)
	require.True(t, k.DeleteLink("eth0"))
	assert.False(t, k.DeleteLink("eth0"), "second delete reports absence")

	_, err = k.ApplyLink(context.Background(), "eth0", 1500)
	assert.ErrorIs(t, err, ErrDeviceBusy)
}

func TestCarrierOfMissingLink(t *testing.T) {
	k := New(Config{})
	assert.False(t, k.SetCarrier("nope", true))
}

// flapRecord runs a flapping kernel with three links for 30 s of virtual
// time and returns the carrier changes it logged, with their virtual times.
func flapRecord(t *testing.T, seed uint64) []string {
	t.Helper()
	var out []string
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.InfoLevel)
		k := New(Config{Seed: seed, FlapMin: time.Second, FlapMax: 3 * time.Second, Logger: zap.New(core)})
		for _, n := range []string{"eth0", "eth1", "wlan0"} {
			_, err := k.ApplyLink(t.Context(), n, 1500)
			require.NoError(t, err)
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, k.Run(ctx)) })
		wg.Wait()

		prev := start
		for _, e := range logs.All() {
			gap := e.Time.Sub(prev)
			assert.GreaterOrEqual(t, gap, time.Second, "interval below FlapMin")
			assert.LessOrEqual(t, gap, 3*time.Second, "interval above FlapMax")
			prev = e.Time
			out = append(out, e.Time.Sub(start).String()+" "+e.Message+" "+e.ContextMap()["link"].(string))
		}
	})
	return out
}

func TestCableStateOutlivesTheLink(t *testing.T) {
	k := New(Config{})
	assert.False(t, k.SetCable("eth0", false), "no link yet")
	l, err := k.ApplyLink(context.Background(), "eth0", 1500)
	require.NoError(t, err)
	assert.False(t, l.Up, "created with its cable unplugged")
	assert.True(t, k.SetCable("eth0", true))
	assert.True(t, k.Links()[0].Up)
	assert.True(t, k.SetCable("eth0", false))
	assert.False(t, k.Links()[0].Up)
	require.True(t, k.DeleteLink("eth0"))
	l, err = k.ApplyLink(context.Background(), "eth0", 1500)
	require.NoError(t, err)
	assert.False(t, l.Up, "the cable is still out")
	k.SetCable("eth0", true)
	require.True(t, k.DeleteLink("eth0"))
	l, err = k.ApplyLink(context.Background(), "eth0", 1500)
	require.NoError(t, err)
	assert.True(t, l.Up)
}

func TestFlappingIsDeterministicPerSeed(t *testing.T) {
	a := flapRecord(t, 42)
	b := flapRecord(t, 42)
	c := flapRecord(t, 43)
	require.GreaterOrEqual(t, len(a), 10, "30 s with intervals of at most 3 s")
	assert.Equal(t, a, b, "same seed, same sequence")
	assert.NotEqual(t, a, c, "another seed, another sequence")
	for i, line := range a {
		if i%2 == 0 {
			assert.Contains(t, line, "carrier lost")
		} else {
			assert.Contains(t, line, "carrier up", "a link taken down comes back at the next step")
		}
	}
}

func TestRunWithoutFlappingReturnsAtOnce(t *testing.T) {
	k := New(Config{})
	assert.NoError(t, k.Run(t.Context()))
}

func TestFlappingLeavesExternallyDownLinksAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := New(Config{Seed: 1, FlapMin: time.Second})
		_, err := k.ApplyLink(context.Background(), "eth0", 1500)
		require.NoError(t, err)
		require.True(t, k.SetCarrier("eth0", false))
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		require.NoError(t, k.Run(ctx))
		assert.False(t, k.Links()[0].Up, "the flapper only brings up links it took down")
	})
}

// TestApplyLink_ASlowCreationEndsWithItsContext: a creation slowed by the
// latency ends when its context is done (an agent told to stop is not held
// for the latency), creating nothing.
func TestApplyLink_ASlowCreationEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := New(Config{Latency: time.Hour})
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := k.ApplyLink(ctx, "eth0", 1500)
			errc <- err
		}()
		synctest.Wait() // it waits on the latency
		cancel()
		err := <-errc
		require.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, k.Links(), "nothing created")
	})
}

// TestStopFlappingEndsTheFlaps: once StopFlapping returned, Run makes no
// more carrier changes and returns, its context still live.
func TestStopFlappingEndsTheFlaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.InfoLevel)
		k := New(Config{Seed: 3, FlapMin: time.Second, FlapMax: 3 * time.Second, Logger: zap.New(core)})
		_, err := k.ApplyLink(t.Context(), "eth0", 1500)
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, k.Run(t.Context())) })
		time.Sleep(10 * time.Second) // virtual time: a few flaps
		k.StopFlapping()
		n := logs.Len()
		require.Positive(t, n, "it flapped before")
		wg.Wait() // Run returned
		time.Sleep(time.Minute)
		assert.Equal(t, n, logs.Len(), "no carrier change after StopFlapping")
		k.StopFlapping() // again: nothing
	})
}
