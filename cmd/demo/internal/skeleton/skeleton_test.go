package skeleton_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/debughttp"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/notify"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// The daemon skeleton of docs/daemons.md (section "A daemon's whole
// life"), compiled: daemonMain's body is its main, line for line
// (TestREADME_TheDaemonSkeletonIsThisCode), with docs/daemons.md's types and
// controller declared as docs/daemons.md declares them.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A resource type is a spec plus a definition.
type NumberSpec struct{ N int }
type NumberDef struct{}

func (NumberDef) Definition() typed.Definition {
	return typed.Definition{Type: "Numbers.example.dev", DefaultNamespace: "default"}
}

type Number = typed.Resource[NumberSpec, NumberDef]

type LabelSpec struct{ Text string }
type LabelDef struct{}

func (LabelDef) Definition() typed.Definition {
	return typed.Definition{Type: "Labels.example.dev", DefaultNamespace: "default"}
}

type Label = typed.Resource[LabelSpec, LabelDef]

// numberToLabel keeps a Label "number N" for every Number N.
func numberToLabel() controller.Controller {
	return transform.NewController(transform.Settings[*Number, *Label]{
		Name: "number-to-label",
		MapMetadataFunc: func(n *Number) *Label {
			return typed.NewDefault[LabelSpec, LabelDef](n.Metadata().ID(), LabelSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, n *Number, l *Label) error {
			l.TypedSpec().Text = "number " + strconv.Itoa(n.TypedSpec().N)
			return nil
		},
	})
}

var logger = zap.NewNop()

// daemonMain is docs/daemons.md's main.
func daemonMain() {
	// SIGTERM (systemctl stop) cancels ctx: that is the whole shutdown signal.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	reg := codec.NewRegistry()
	codec.MustRegister[NumberSpec, NumberDef](reg)
	st, err := boltdb.Open("/var/lib/mydaemon/state.db", reg)
	if err != nil {
		log.Fatal(err)
	}
	rt, err := runtime.New(st, logger)
	if err != nil {
		log.Fatal(err)
	}
	if err := rt.RegisterController(numberToLabel()); err != nil {
		log.Fatal(err)
	}
	ln, err := debughttp.Listen("127.0.0.1:6060")
	if err != nil {
		log.Fatal(err)
	}

	var g errgroup.Group
	// Run returns once every controller stopped.
	g.Go(func() error { return rt.Run(ctx) })
	// /readyz and /healthz.
	g.Go(func() error { return debughttp.Serve(ctx, ln, debughttp.New(rt.Observe())) })
	// READY=1 once ready, WATCHDOG=1 while live, STOPPING=1 when ctx is canceled.
	g.Go(func() error { return notify.Serve(ctx, rt.Observe()) })
	err = g.Wait() // the controllers have stopped,
	if cerr := st.Close(); err == nil {
		err = cerr // then the state is closed
	}
	if err != nil {
		log.Fatal(err)
	}
}

var _ = daemonMain

// TestREADME_TheDaemonSkeletonIsThisCode: docs/daemons.md's daemon skeleton is
// daemonMain's body, so that it compiles (go vet runs on this file).
func TestREADME_TheDaemonSkeletonIsThisCode(t *testing.T) {
	readme, err := os.ReadFile("../../../../docs/daemons.md")
	if err != nil {
		t.Fatal(err)
	}
	me, err := os.ReadFile("skeleton_test.go")
	if err != nil {
		t.Fatal(err)
	}
	want := between(t, string(readme), "The whole life of a daemon:", "func main() {\n", "\n}\n```\n")
	got := between(t, string(me), "// daemonMain is docs/daemons.md's main.", "func daemonMain() {\n", "\n}\n\nvar _")
	if got != want {
		t.Errorf("docs/daemons.md's daemon skeleton is not daemonMain's body:\ndocs/daemons.md:\n%s\ncode:\n%s", want, got)
	}
	for _, life := range []string{"signal.NotifyContext(", "rt.Run(ctx)", "notify.Serve(ctx, rt.Observe())", "st.Close()"} {
		if !strings.Contains(want, life) {
			t.Errorf("the skeleton lost a part of the life: %s", life)
		}
	}
}

// between returns what of s lies between start and end, after the first
// start that follows after.
func between(t *testing.T, s, after, start, end string) string {
	t.Helper()
	i := strings.Index(s, after)
	if i < 0 {
		t.Fatalf("no %q", after)
	}
	s = s[i:]
	j := strings.Index(s, start)
	if j < 0 {
		t.Fatalf("no %q after %q", start, after)
	}
	s = s[j+len(start):]
	k := strings.Index(s, end)
	if k < 0 {
		t.Fatalf("no %q after %q", end, start)
	}
	return s[:k]
}
