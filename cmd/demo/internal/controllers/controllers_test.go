package controllers

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/controller"

	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a Runtime that records registrations.
type recorder struct {
	controllers  []controller.Controller
	qcontrollers []controller.QController
}

func (r *recorder) RegisterController(c controller.Controller) error {
	r.controllers = append(r.controllers, c)
	return nil
}

func (r *recorder) RegisterQController(c controller.QController) error {
	r.qcontrollers = append(r.qcontrollers, c)
	return nil
}

func (r *recorder) Run(context.Context) error { return nil }

func TestR1_RegisterRegistersEveryNamedController(t *testing.T) {
	var rec recorder
	require.NoError(t, Register(&rec, kernel.New(kernel.Config{})))
	var names []string
	for _, c := range rec.controllers {
		names = append(names, c.Name())
	}
	for _, c := range rec.qcontrollers {
		names = append(names, c.Name())
	}
	slices.Sort(names)
	assert.Equal(t, Names(), names)
}

func TestR2_RouteSpecIsSharedAndConcurrencyAboveOne(t *testing.T) {
	var rec recorder
	require.NoError(t, Register(&rec, kernel.New(kernel.Config{})))
	var sharers []string
	for _, c := range rec.controllers {
		for _, o := range c.Outputs() {
			if o.Type == netres.RouteSpecType {
				assert.Equal(t, controller.OutputShared, o.Kind, c.Name())
				sharers = append(sharers, c.Name())
			}
		}
	}
	assert.ElementsMatch(t, []string{DefaultRouteControllerName, StaticRouteControllerName}, sharers)
	require.Len(t, rec.qcontrollers, 1)
	assert.Equal(t, uint(LinkApplyConcurrency), rec.qcontrollers[0].Settings().Concurrency.ValueOrZero())
	assert.Greater(t, LinkApplyConcurrency, 1)
}
