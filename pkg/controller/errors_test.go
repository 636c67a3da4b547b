package controller_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestAccessDeniedErrorClass(t *testing.T) {
	err := controller.NewAccessDeniedError("c", "Create", "Bs.test(ns/x)", "not a declared output")
	assert.Equal(t, `controller "c": Create Bs.test(ns/x) denied: not a declared output`, err.Error())
	assert.True(t, controller.IsAccessDeniedError(err))
	assert.True(t, controller.IsAccessDeniedError(fmt.Errorf("reconcile: %w", err)), "seen through wrapping")
	assert.False(t, controller.IsAccessDeniedError(errors.New("controller \"c\": denied")))
	assert.False(t, controller.IsAccessDeniedError(nil))
	assert.False(t, state.IsInvalidError(err), "not bad input: a refused access")
}
