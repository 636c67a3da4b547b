package controllers

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPlanKernel_QuietOnceTheObserverMirroredAReadAfterTheLastChange: the
// plan's kernel (plan.System.Quiet, rule PL3) is quiet at first, not once
// it was asked for a change, not after a pass whose read came before the
// last change, and quiet again after a pass that read after it.
func TestPlanKernel_QuietOnceTheObserverMirroredAReadAfterTheLastChange(t *testing.T) {
	w := &planKernel{}
	assert.True(t, w.quiet(), "nothing changed")
	w.changed("create link eth0 (MTU 1500)")
	assert.False(t, w.quiet(), "a change the observer has not read")
	w.reading()
	w.changed("set the MTU of eth0 to 1400")
	w.synced()
	assert.False(t, w.quiet(), "the pass read before the last change")
	w.reading()
	assert.False(t, w.quiet(), "a pass that has not ended")
	w.synced()
	assert.True(t, w.quiet(), "a pass that read after the last change ended")
	assert.Equal(t, []string{"kernel: create link eth0 (MTU 1500)", "kernel: set the MTU of eth0 to 1400"}, w.actions())
}
