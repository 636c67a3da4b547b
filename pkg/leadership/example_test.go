package leadership_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/leadership"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A controller stamps what it writes with the term it runs under. The
// Runtime hands a leading controller a context that carries its term; a
// test hands one with NewContext, and without leadership there is none.
func ExampleFromContext() {
	stamp := func(ctx context.Context) string {
		term, ok := leadership.FromContext(ctx)
		if !ok {
			return "no term: this Runtime runs without leadership"
		}
		return fmt.Sprintf("election %s, term %d", term.Election, term.Number)
	}
	fmt.Println(stamp(context.Background()))
	ctx := leadership.NewContext(context.Background(), leadership.TermInfo{Election: "controller/BtoC", Number: 42, Since: time.Now()})
	fmt.Println(stamp(ctx))
	// Output:
	// no term: this Runtime runs without leadership
	// election controller/BtoC, term 42
}
