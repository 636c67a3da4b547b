package debughttp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/debughttp"
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
