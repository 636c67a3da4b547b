package debughttp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// parking is failing with a retry policy that parks an item at its first
// failure.
type parking struct{ failing }

func (parking) RetryPolicy() controller.RetryPolicy { return controller.RetryPolicy{MaxAttempts: 1} }

// TestControllersPageShowsParkedItems: the controllers page lists the items
// a QController's retry policy parked, each with its last error (escaped).
func TestControllersPageShowsParkedItems(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(parking{}), runtimetest.WithLogger(zap.NewNop()))
	runtimetest.Create(t, e.State, typed.NewDefault[itemSpec, itemDef]("one", itemSpec{}))
	runtimetest.Settle(t, e.Runtime)
	base := serve(t, debughttp.New(e.Runtime.Observe(), debughttp.WithClock(func() time.Time { return t0 })))
	resp, body := get(t, base+"/debug/controllers")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "1 parked until their next change:")
	assert.Contains(t, body, `Reconcile Items.test.resgraph.dev(default/one) (1 attempts): apply &lt;script&gt;`)
	_, js := get(t, base+"/debug/controllers?format=json")
	assert.Contains(t, js, `"parkedItems": 1`)
}

// denying is a QController whose Reconcile writes an item, a type it does
// not declare as an output: the Runtime denies it (rule C3).
type denying struct{ failing }

func (denying) Name() string { return "Denying" }
func (denying) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
	return r.Modify(ctx, typed.NewDefault[itemSpec, itemDef]("written", itemSpec{}), func(resource.Resource) error { return nil })
}

// denyingRun is a Controller whose Run returns the denial of a write to an
// undeclared output.
type denyingRun struct{ idle }

func (denyingRun) Name() string { return "DenyingRun" }
func (denyingRun) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	<-r.EventCh()
	return r.Modify(ctx, typed.NewDefault[itemSpec, itemDef]("written", itemSpec{}), func(resource.Resource) error { return nil })
}

// TestControllersPageShowsDenials: an access denial parks the item (listed
// with its error) or the Controller (state "parked", its error), on the
// controllers page as in its JSON.
func TestControllersPageShowsDenials(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(denying{}), runtimetest.WithControllers(denyingRun{}), runtimetest.WithLogger(zap.NewNop()))
	runtimetest.Create(t, e.State, typed.NewDefault[itemSpec, itemDef]("one", itemSpec{}))
	runtimetest.Settle(t, e.Runtime)
	base := serve(t, debughttp.New(e.Runtime.Observe(), debughttp.WithClock(func() time.Time { return t0 })))
	resp, body := get(t, base+"/debug/controllers")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "1 parked until their next change:")
	assert.Contains(t, body, `Reconcile Items.test.resgraph.dev(default/one) (1 attempts): controller &#34;Denying&#34;: Modify Items.test.resgraph.dev(default/written) denied: not a declared output`)
	assert.Contains(t, body, "parked since")
	assert.Contains(t, body, `controller &#34;DenyingRun&#34;: Modify Items.test.resgraph.dev(default/written) denied: not a declared output`)
	_, js := get(t, base+"/debug/controllers?format=json")
	assert.Contains(t, js, `"state": "parked"`)
}
