package runtimetest_test

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
)

// A merge controller as OS daemons have them: hostname configurations
// come from several layers (defaults, DHCP, the operator); the hostname
// is the one of the highest layer.

type HostnameConfigSpec struct {
	Hostname string
	Layer    int // higher wins
}

type HostnameConfigDef struct{}

func (HostnameConfigDef) Definition() typed.Definition {
	return typed.Definition{Type: "HostnameConfigs.test.resgraph.dev", DefaultNamespace: "config"}
}

type HostnameConfig = typed.Resource[HostnameConfigSpec, HostnameConfigDef]

type HostnameSpec struct {
	Hostname string
	Layer    int
}

type HostnameDef struct{}

func (HostnameDef) Definition() typed.Definition {
	return typed.Definition{Type: "Hostnames.test.resgraph.dev", DefaultNamespace: "network"}
}

type Hostname = typed.Resource[HostnameSpec, HostnameDef]

func hostnameConfig(id, name string, layer int) *HostnameConfig {
	return typed.NewDefault[HostnameConfigSpec, HostnameConfigDef](id, HostnameConfigSpec{Hostname: name, Layer: layer})
}

// hostnameMerge keeps the Hostname "hostname" from the HostnameConfigs.
type hostnameMerge struct{}

func (hostnameMerge) Name() string { return "hostname-merge" }
func (hostnameMerge) Inputs() []controller.Input {
	k := typed.Kind[*HostnameConfig]()
	return []controller.Input{{Namespace: k.Namespace(), Type: k.Type(), Kind: controller.InputWeak}}
}
func (hostnameMerge) Outputs() []controller.Output {
	return []controller.Output{{Type: typed.Kind[*Hostname]().Type(), Kind: controller.OutputExclusive}}
}

func (hostnameMerge) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		cfgs, err := safe.ReaderListAll[*HostnameConfig](ctx, r)
		if err != nil {
			return err
		}
		var running []*HostnameConfig
		for c := range cfgs.All() {
			if c.Metadata().Phase() == resource.PhaseRunning {
				running = append(running, c)
			}
		}
		r.StartTrackingOutputs()
		if len(running) > 0 {
			best := slices.MaxFunc(running, func(a, b *HostnameConfig) int { return cmp.Compare(a.TypedSpec().Layer, b.TypedSpec().Layer) })
			if err := safe.WriterModify(ctx, r, typed.NewDefault[HostnameSpec, HostnameDef]("hostname", HostnameSpec{}), func(h *Hostname) error {
				h.TypedSpec().Hostname, h.TypedSpec().Layer = best.TypedSpec().Hostname, best.TypedSpec().Layer
				return nil
			}); err != nil {
				return err
			}
		}
		if err := r.CleanupOutputs(ctx, typed.Kind[*Hostname]()); err != nil {
			return err
		}
	}
}

// TestPortedStyle_HostnameMerge is a test as it reads in the established
// runtime's testify suites, ported: create the layers, assert on the
// merged resource with testify inside a retry, destroy a layer, assert
// again, destroy the rest, assert it is gone. Every assertion waits up to
// 5 s, as the upstream tests did.
func TestPortedStyle_HostnameMerge(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithControllers(hostnameMerge{}))
	runtimetest.SetTimeout(t, 5*time.Second)

	runtimetest.Create(t, e.State,
		hostnameConfig("default", "talos-default", 0),
		hostnameConfig("dhcp", "from-dhcp", 1),
		hostnameConfig("operator", "my-node", 2),
	)

	runtimetest.AssertResource(t, e.State, "hostname", func(r *Hostname, asrt *assert.Assertions) {
		asrt.Equal("my-node", r.TypedSpec().Hostname)
		asrt.Equal(2, r.TypedSpec().Layer)
	})

	runtimetest.Destroy[*HostnameConfig](t, e.State, []resource.ID{"operator"})

	runtimetest.AssertResource(t, e.State, "hostname", func(r *Hostname, asrt *assert.Assertions) {
		asrt.Equal("from-dhcp", r.TypedSpec().Hostname)
	})

	runtimetest.Destroy[*HostnameConfig](t, e.State, []resource.ID{"default", "dhcp"})

	runtimetest.AssertNoResource[*Hostname](t, e.State, "hostname")
}

// TestAssertResource_RetriesAndReturnsACopy: a failed assertion is
// retried on every change until it passes; what the failed attempts
// recorded does not fail the test; the result is a private copy.
func TestAssertResource_RetriesAndReturnsACopy(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithControllers(numberToLabel()))
	runtimetest.Create(t, e.State, number("one", 1))
	attempts := 0
	failed := make(chan struct{})
	var once sync.Once
	changed := make(chan error, 1)
	go func() {
		<-failed // the assertion failed on "number 1"
		changed <- safe.StateModify(context.Background(), e.State, number("one", 0), func(r *Number) error {
			r.TypedSpec().N = 4
			return nil
		})
	}()
	l := runtimetest.AssertResource(t, e.State, "one", func(l *Label, asrt *assert.Assertions) {
		attempts++
		if !asrt.Equal("number 4", l.TypedSpec().Text) {
			once.Do(func() { close(failed) })
		}
	})
	require.NoError(t, <-changed)
	assert.Greater(t, attempts, 1, "retried after a failed attempt")
	assert.Equal(t, "number 4", l.TypedSpec().Text)
	l.TypedSpec().Text = "mine"
	cur, err := safe.StateGet[*Label](t.Context(), e.State, typed.Pointer[*Label]("one"))
	require.NoError(t, err)
	assert.Equal(t, "number 4", cur.TypedSpec().Text, "the state is not changed")
}

// TestAssertResource_TimeoutReportsTheLastFailures: when the time of
// Within is up, the test fails with what testify recorded on the last
// state, the last state itself, and the timeout; a missing resource is
// reported absent. (In a bubble: the timeouts pass in virtual time.)
func TestAssertResource_TimeoutReportsTheLastFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := runtimetest.Start(t, runtimetest.WithControllers(numberToLabel()))
		runtimetest.Create(t, e.State, number("one", 1))
		runtimetest.Settle(t, e.Runtime)
		start := time.Now()
		msg := run(t, func(tb testing.TB) {
			runtimetest.AssertResources(tb, e.State, []resource.ID{"one", "missing"}, func(l *Label, asrt *assert.Assertions) {
				asrt.Equal("number 2", l.TypedSpec().Text, "the text")
				asrt.NotEmpty(l.Metadata().Owner())
			}, runtimetest.Within(5*time.Second))
		})
		assert.Equal(t, 5*time.Second, time.Since(start), "Within sets the timeout of the call")
		assert.Contains(t, msg, "not passed within 5s")
		assert.Contains(t, msg, "--- one:")
		assert.Contains(t, msg, `expected: "number 2"`)
		assert.Contains(t, msg, `actual  : "number 1"`)
		assert.Contains(t, msg, "the text")
		assert.NotContains(t, msg, "Should not be empty", "only the assertions that failed")
		assert.Contains(t, msg, "last state:")
		assert.Contains(t, msg, "--- missing: absent")
	})
}

// TestAssertResource_PanicIsAFailedAttempt: an assertion that panics (a
// nil dereference on an incomplete resource) is a failed attempt,
// reported as such, not a crash.
func TestAssertResource_PanicIsAFailedAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := runtimetest.Start(t)
		runtimetest.Create(t, e.State, number("one", 1))
		msg := run(t, func(tb testing.TB) {
			runtimetest.AssertResource(tb, e.State, "one", func(*Number, *assert.Assertions) {
				var m map[string]*int
				_ = *m["x"]
			}, runtimetest.Within(time.Second))
		})
		assert.Contains(t, msg, "the assertion panicked")
	})
}

// TestAssertResources_InNamespace: the resources of another namespace
// than the type's default are addressed with InNamespace, by the
// assertions and by Destroy and Teardown.
func TestAssertResources_InNamespace(t *testing.T) {
	e := runtimetest.Start(t)
	other := func(id string, n int) *Number {
		return typed.New[NumberSpec, NumberDef](resource.NewMetadata("other", typed.Kind[*Number]().Type(), id, resource.VersionUndefined), NumberSpec{N: n})
	}
	runtimetest.Create(t, e.State, other("a", 1), other("b", 2))
	got := runtimetest.AssertResources(t, e.State, []resource.ID{"b", "a"}, func(r *Number, asrt *assert.Assertions) {
		asrt.Positive(r.TypedSpec().N)
	}, runtimetest.InNamespace("other"))
	require.Len(t, got, 2)
	assert.Equal(t, "b", got[0].Metadata().ID(), "in the order of the IDs")

	runtimetest.Teardown[*Number](t, e.State, []resource.ID{"a"}, runtimetest.InNamespace("other"))
	runtimetest.AssertResource(t, e.State, "a", func(r *Number, asrt *assert.Assertions) {
		asrt.Equal(resource.PhaseTearingDown, r.Metadata().Phase())
	}, runtimetest.InNamespace("other"))
	runtimetest.Destroy[*Number](t, e.State, []resource.ID{"a", "b"}, runtimetest.InNamespace("other"))
	runtimetest.AssertNoResource[*Number](t, e.State, "a", runtimetest.InNamespace("other"))
	runtimetest.AssertNoResource[*Number](t, e.State, "b", runtimetest.InNamespace("other"))
}

// TestDestroy_WaitsForFinalizers: Destroy tears the resource down, waits
// until the finalizers are removed (by a controller, here the test), then
// destroys it; a finalizer that stays fails the test when the time is up,
// naming it; Teardown of a missing resource fails the test.
func TestDestroy_WaitsForFinalizers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := runtimetest.Start(t)
		ptr := typed.Pointer[*Number]("one")
		runtimetest.Create(t, e.State, number("one", 1))
		require.NoError(t, e.State.AddFinalizer(t.Context(), ptr, "keeper"))
		released := make(chan error, 1)
		go func() {
			synctest.Wait() // Destroy waits for the finalizer
			released <- e.State.RemoveFinalizer(context.Background(), ptr, "keeper")
		}()
		runtimetest.Destroy[*Number](t, e.State, []resource.ID{"one"})
		require.NoError(t, <-released)
		_, err := e.State.Get(t.Context(), ptr)
		assert.Error(t, err, "destroyed")

		runtimetest.Create(t, e.State, number("two", 2))
		require.NoError(t, e.State.AddFinalizer(t.Context(), typed.Pointer[*Number]("two"), "stays"))
		msg := run(t, func(tb testing.TB) {
			runtimetest.Destroy[*Number](tb, e.State, []resource.ID{"two"}, runtimetest.Within(time.Second))
		})
		assert.Contains(t, msg, "destroy Numbers.test.resgraph.dev(default/two)")
		assert.Contains(t, msg, "stays")

		msg = run(t, func(tb testing.TB) {
			runtimetest.Teardown[*Number](tb, e.State, []resource.ID{"nope"})
		})
		assert.Contains(t, msg, "teardown Numbers.test.resgraph.dev(default/nope)")
		runtimetest.Destroy[*Number](t, e.State, []resource.ID{"nope"}) // already gone: destroyed
	})
}

// TestSetTimeout_AppliesToEveryWaitOfTheTest: the bool-predicate form
// takes the test's timeout too (Settle: TestSettleTakesTheTestsTimeout).
func TestSetTimeout_AppliesToEveryWaitOfTheTest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := runtimetest.Start(t)
		f := &failTB{TB: t}
		runtimetest.SetTimeout(f, 2*time.Second)
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtimetest.AssertResource(f, e.State, "one", runtimetest.Holds(func(*Number) bool { return true }))
		}()
		<-done
		assert.Equal(t, 2*time.Second, time.Since(start))
		assert.Contains(t, f.msg, "not passed within 2s")
	})
}

type SecretSpec struct{ User, Password string }

func (s SecretSpec) RedactSpec() any {
	s.Password = "***"
	return s
}

type SecretDef struct{}

func (SecretDef) Definition() typed.Definition {
	return typed.Definition{Type: "Secrets.test.resgraph.dev", DefaultNamespace: "default"}
}

type Secret = typed.Resource[SecretSpec, SecretDef]

// TestFailureReports_RedactSecrets: a spec that redacts itself
// (resource.SpecRedacter) is printed redacted in the kit's failure
// reports.
func TestFailureReports_RedactSecrets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := runtimetest.Start(t)
		runtimetest.Create(t, e.State, typed.NewDefault[SecretSpec, SecretDef]("db", SecretSpec{User: "admin", Password: "hunter2"}))
		for name, wait := range map[string]func(tb testing.TB){
			"assert": func(tb testing.TB) {
				runtimetest.AssertResource(tb, e.State, "db", func(r *Secret, asrt *assert.Assertions) {
					asrt.Equal("root", r.TypedSpec().User)
				}, runtimetest.Within(time.Second))
			},
			"await": func(tb testing.TB) {
				runtimetest.AssertResource(tb, e.State, "db", runtimetest.Holds(func(r *Secret) bool { return r.TypedSpec().User == "root" }))
			},
		} {
			msg := run(t, wait)
			assert.Contains(t, msg, "User:admin Password:***", name)
			assert.NotContains(t, msg, "hunter2", name)
		}
	})
}
