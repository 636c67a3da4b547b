package skeleton_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The README's minimal controller (section "A minimal controller") and its
// test (section "Testing it"), compiled and run: the example's body is the
// README's main, line for line, and prints what the README says it
// prints; TestNumberGetsALabel is the README's test; the README's types
// and controller are skeleton_test.go's
// (TestREADME_TheMinimalControllerIsThisCode).

// Example_minimalController is the README's main.
func Example_minimalController() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		log.Fatal(err)
	}
	if err = rt.RegisterController(numberToLabel()); err != nil {
		log.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	if err = st.Create(ctx, typed.NewDefault[NumberSpec, NumberDef]("one", NumberSpec{N: 1})); err != nil {
		log.Fatal(err)
	}
	// Wait until the controller has written the label, then read it typed.
	if _, err = st.WatchFor(ctx, resource.NewPointer("default", "Labels.example.dev", "one")); err != nil {
		log.Fatal(err)
	}
	label, err := safe.StateGet[*Label](ctx, st, resource.NewPointer("default", "Labels.example.dev", "one"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(label.TypedSpec().Text) // number 1

	cancel()
	if err = <-done; err != nil { // Run returns once every controller stopped
		log.Fatal(err)
	}
	// Output: number 1
}

func TestNumberGetsALabel(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithControllers(numberToLabel()))
	runtimetest.Create(t, e.State, typed.NewDefault[NumberSpec, NumberDef]("one", NumberSpec{N: 1}))

	label := runtimetest.AssertResource(t, e.State, "one", func(l *Label, asrt *assert.Assertions) {
		asrt.Equal("number 1", l.TypedSpec().Text)
	})
	assert.Equal(t, "number-to-label", label.Metadata().Owner())

	require.NoError(t, e.State.Destroy(t.Context(), typed.Pointer[*Number]("one")))
	runtimetest.AssertNoResource[*Label](t, e.State, "one")
	runtimetest.Settle(t, e.Runtime) // nothing left to do: no controller busy, no item due, no watch behind
}

// TestREADME_TheMinimalControllerIsThisCode: the README's minimal
// controller is this package's code — its types and controller
// skeleton_test.go's, its main Example_minimalController's body (whose
// output is the one its comment gives), its test TestNumberGetsALabel —
// so that it compiles and does what it says.
func TestREADME_TheMinimalControllerIsThisCode(t *testing.T) {
	readme := readFile(t, "../../../../README.md")
	skeleton := readFile(t, "skeleton_test.go")
	me := readFile(t, "minimal_test.go")

	decls := between(t, readme, "## A minimal controller", ")\n\n", "\nfunc main() {\n")
	if !strings.Contains(skeleton, decls) {
		t.Errorf("the README's types and controller are not skeleton_test.go's:\n%s", decls)
	}
	want := between(t, readme, "## A minimal controller", "func main() {\n", "\n}\n```\n")
	got := between(t, me, "// Example_minimalController is the README's main.", "func Example_minimalController() {\n", "\n\t// Output:")
	if got != want {
		t.Errorf("the README's main is not Example_minimalController's body:\nREADME:\n%s\ncode:\n%s", want, got)
	}
	if !strings.Contains(want, "fmt.Println(label.TypedSpec().Text) // number 1") {
		t.Error("the README's main no longer says what it prints")
	}
	test := between(t, readme, "The test of the program above", "```go\n", "```\n")
	if !strings.Contains(me, test) {
		t.Errorf("the README's test is not TestNumberGetsALabel:\n%s", test)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
