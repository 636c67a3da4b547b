package runtimetest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// numberGetsALabel is a controller's test as runtimetest writes it (a
// Test function in your package; here in lower case, since an example's
// file holds no test, and TestExampleStart runs it): Start runs a Runtime
// with the controller under test over a fresh state until the test ends;
// the test writes an input as an outside writer would, and asserts on the
// output, retried on every change until it passes or the test's timeout
// (SetTimeout, Within) is up; Settle waits until the Runtime is idle.
func numberGetsALabel(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithControllers(numberToLabel()))
	runtimetest.Create(t, e.State, number("one", 1))
	label := runtimetest.AssertResource(t, e.State, "one", func(l *Label, asrt *assert.Assertions) {
		asrt.Equal("number 1", l.TypedSpec().Text)
	})
	assert.Equal(t, "number-to-label", label.Metadata().Owner())

	runtimetest.Destroy[*Number](t, e.State, []string{"one"})
	runtimetest.AssertNoResource[*Label](t, e.State, "one")
	runtimetest.Settle(t, e.Runtime)
}

// A test of a controller: see numberGetsALabel above, a test function
// (an example is given no *testing.T, so this one is compiled, with no
// output to check, and TestExampleStart runs numberGetsALabel).
func ExampleStart() {}
