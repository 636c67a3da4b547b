package busy_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/runtime/internal/busy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Unix(1_700_000_000, 0)

func TestFractionOverTheWindow(t *testing.T) {
	m := busy.New(1, 10)
	assert.Zero(t, m.Fraction(t0))
	// 500 ms of work in each of 10 seconds: half busy.
	for i := range 10 {
		m.Add(t0.Add(time.Duration(i)*time.Second+700*time.Millisecond), 500*time.Millisecond)
	}
	assert.InDelta(t, 0.5, m.Fraction(t0.Add(10*time.Second)), 1e-9)
	assert.InDelta(t, 0.45, m.Fraction(t0.Add(11*time.Second)), 1e-9, "the oldest second left the window")
	assert.Zero(t, m.Fraction(t0.Add(time.Hour)), "all old")
	assert.InDelta(t, 0.45, m.Fraction(t0.Add(10*time.Second+999*time.Millisecond)), 0.051, "the current second is not read")
}

func TestWorkSpanningSecondsIsSpread(t *testing.T) {
	m := busy.New(1, 4)
	m.Add(t0.Add(3*time.Second), 3*time.Second) // [t0, t0+3s)
	assert.InDelta(t, 0.75, m.Fraction(t0.Add(4*time.Second)), 1e-9)
	assert.InDelta(t, 0.75, m.Fraction(t0.Add(3*time.Second)), 1e-9, "t0-1s, t0, t0+1s, t0+2s")
	over := busy.New(1, 1)
	over.Add(t0.Add(time.Second), time.Second)
	over.Add(t0.Add(time.Second), time.Second) // more work than one worker can do
	assert.InDelta(t, 1, over.Fraction(t0.Add(time.Second)), 1e-9, "capped")
	long := busy.New(1, 2)
	long.Add(t0.Add(time.Hour), time.Hour) // far more than the ring
	assert.InDelta(t, 1, long.Fraction(t0.Add(time.Hour)), 1e-9)
}

func TestPoolFraction(t *testing.T) {
	m := busy.New(4, 1)
	assert.Equal(t, 4, m.Workers())
	m.Add(t0.Add(time.Second), time.Second)
	m.Add(t0.Add(time.Second), time.Second)
	assert.InDelta(t, 0.5, m.Fraction(t0.Add(time.Second)), 1e-9, "2 of 4 workers busy")
	assert.Equal(t, 1, busy.New(0, 0).Workers())
	m.Add(t0, 0)
	m.Add(t0, -time.Second)
}

func TestConcurrentAdds(t *testing.T) {
	m := busy.New(8, 2)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 1000 {
				m.Add(t0.Add(time.Second+time.Duration(i)*time.Microsecond), time.Microsecond)
			}
		})
	}
	wg.Wait()
	// 8 × 1000 µs of work in second t0+1s (and a little before).
	got := m.Fraction(t0.Add(2 * time.Second))
	assert.InDelta(t, 8*1000*float64(time.Microsecond)/(2*8*float64(time.Second)), got, 1e-6)
}

func BenchmarkAdd(b *testing.B) {
	m := busy.New(1, 10)
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Microsecond)
		m.Add(now, 500*time.Nanosecond)
	}
}
