package ported_test

// A test written as the established runtime's test users write theirs — a
// testify suite holding a context, the state and the Runtime, and the
// upstream test-helper calls with a context first — ported by changing
// imports only: rtestutils is this package. The Runtime's construction in
// SetupTest uses resgraph's constructors (docs/porting.md maps them); every
// test-helper call below is as the upstream test wrote it.

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/suite"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	rtestutils "github.com/resgraph/resgraph/pkg/runtime/runtimetest/ported"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type LinkSpecSpec struct{ MTU int }
type LinkSpecDef struct{}

func (LinkSpecDef) Definition() typed.Definition {
	return typed.Definition{Type: "LinkSpecs.test.resgraph.dev", DefaultNamespace: "network"}
}

type LinkSpec = typed.Resource[LinkSpecSpec, LinkSpecDef]

type LinkStatusSpec struct{ MTU int }
type LinkStatusDef struct{}

func (LinkStatusDef) Definition() typed.Definition {
	return typed.Definition{Type: "LinkStatuses.test.resgraph.dev", DefaultNamespace: "network"}
}

type LinkStatus = typed.Resource[LinkStatusSpec, LinkStatusDef]

// linkStatusController keeps a LinkStatus for every LinkSpec.
func linkStatusController() controller.Controller {
	return transform.NewController(transform.Settings[*LinkSpec, *LinkStatus]{
		Name: "LinkStatusController",
		MapMetadataFunc: func(in *LinkSpec) *LinkStatus {
			return typed.NewDefault[LinkStatusSpec, LinkStatusDef](in.Metadata().ID(), LinkStatusSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in *LinkSpec, out *LinkStatus) error {
			out.TypedSpec().MTU = in.TypedSpec().MTU
			return nil
		},
	})
}

type LinkStatusSuite struct {
	suite.Suite

	state   state.State
	runtime *runtime.Runtime
	wg      sync.WaitGroup

	ctx       context.Context //nolint:containedctx
	ctxCancel context.CancelFunc
}

func (suite *LinkStatusSuite) SetupTest() {
	suite.ctx, suite.ctxCancel = context.WithTimeout(context.Background(), 3*time.Minute)

	suite.state = inmem.NewState()

	var err error
	suite.runtime, err = runtime.New(suite.state, zaptest.NewLogger(suite.T()))
	suite.Require().NoError(err)
	suite.Require().NoError(suite.runtime.RegisterController(linkStatusController()))

	suite.wg.Add(1)
	go func() {
		defer suite.wg.Done()
		suite.Assert().NoError(suite.runtime.Run(suite.ctx))
	}()
}

func (suite *LinkStatusSuite) TearDownTest() {
	suite.ctxCancel()
	suite.wg.Wait()
}

func (suite *LinkStatusSuite) TestStatusFollowsSpec() {
	for _, id := range []string{"eth0", "eth1"} {
		spec := typed.NewDefault[LinkSpecSpec, LinkSpecDef](id, LinkSpecSpec{MTU: 1500})
		suite.Require().NoError(suite.state.Create(suite.ctx, spec))
	}

	rtestutils.AssertResources(suite.ctx, suite.T(), suite.state, []resource.ID{"eth0", "eth1"}, func(r *LinkStatus, asrt *assert.Assertions) {
		asrt.Equal(1500, r.TypedSpec().MTU)
	})

	ctx, cancel := context.WithTimeout(suite.ctx, 10*time.Second)
	defer cancel()

	rtestutils.AssertResource(ctx, suite.T(), suite.state, "eth0", func(r *LinkStatus, asrt *assert.Assertions) {
		asrt.Equal("LinkStatusController", r.Metadata().Owner())
	})

	suite.Assert().Equal([]resource.ID{"eth0", "eth1"}, rtestutils.ResourceIDsWithOwner[*LinkStatus](suite.ctx, suite.T(), suite.state, "LinkStatusController"))
	suite.Assert().Empty(rtestutils.ResourceIDsWithOwner[*LinkStatus](suite.ctx, suite.T(), suite.state, "someone-else"))

	rtestutils.Destroy[*LinkSpec](suite.ctx, suite.T(), suite.state, []resource.ID{"eth1"})
	rtestutils.AssertNoResource[*LinkStatus](suite.ctx, suite.T(), suite.state, "eth1")
	suite.Assert().Equal([]resource.ID{"eth0"}, rtestutils.ResourceIDs[*LinkStatus](suite.ctx, suite.T(), suite.state))

	rtestutils.DestroyAll[*LinkSpec](suite.ctx, suite.T(), suite.state)
	rtestutils.AssertNoResource[*LinkStatus](suite.ctx, suite.T(), suite.state, "eth0")
	suite.Assert().Empty(rtestutils.ResourceIDs[*LinkSpec](suite.ctx, suite.T(), suite.state))
}

func TestLinkStatusSuite(t *testing.T) {
	suite.Run(t, new(LinkStatusSuite))
}

// TestContextDeadlineIsTheCallsTimeout: a context's deadline bounds the
// call, as it bounds an upstream helper's.
func TestContextDeadlineIsTheCallsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		f := &failTB{TB: t}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			rtestutils.AssertResource(ctx, f, st, "eth9", func(*LinkStatus, *assert.Assertions) {})
		}()
		<-done
		assert.Equal(t, 5*time.Second, time.Since(start), "bounded by the context's deadline (virtual time)")
		assert.Contains(t, f.msg, "eth9: absent")
	})
}

// failTB records a Fatalf instead of failing.
type failTB struct {
	testing.TB
	msg string
}

func (f *failTB) Helper() {}

func (f *failTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	goruntime.Goexit()
}
