package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/leadership"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/state"
)

// LeadershipScope is what one election of [WithLeadership] decides.
type LeadershipScope int

const (
	// LeadPerRuntime: one election for the Runtime (named
	// [RuntimeElection]); the replica that leads it runs every
	// controller.
	LeadPerRuntime LeadershipScope = iota + 1
	// LeadPerController: one election per controller (named
	// [ControllerElectionPrefix] + its name); each controller runs in
	// the replica that leads its election, so that the controllers
	// spread over the replicas as the elector spreads its elections.
	LeadPerController
)

// String returns "runtime" or "controller".
func (s LeadershipScope) String() string {
	switch s {
	case LeadPerRuntime:
		return "runtime"
	case LeadPerController:
		return "controller"
	}
	return fmt.Sprintf("LeadershipScope(%d)", int(s))
}

// Election names of [WithLeadership].
const (
	RuntimeElection          = "runtime"
	ControllerElectionPrefix = "controller/"
)

// leadershipOptions are what [WithLeadership] sets.
type leadershipOptions struct {
	// elector runs the elections; nil: no leadership.
	elector leadership.Elector
	// scope is per Runtime or per controller.
	scope LeadershipScope
	// set is true once WithLeadership was given.
	set bool
}

// WithLeadership makes the Runtime one of several replicas that share a
// state (rule E4): it runs each controller only while it leads the
// controller's election, held through el — one election for the whole
// Runtime, or one per controller (scope). A controller this replica does
// not lead is a standby: registered, its inputs watched (its caches
// warm), but not running; its status says so (leader or standby, since
// when, the term). When it becomes the leader, the controller starts as
// after a restart: a Controller with a start wake-up, a QController with
// every existing resource of its inputs queued (rule Q1).
//
// Every write a controller makes under a term is fenced by the term
// ([leadership.Term.Fence], [state.WithFence]): the state commits it only
// while the term stands, and a write after the term ended (its lease
// expired, a successor was elected) fails with an error of the fenced
// class ([state.IsFencedError]), writing nothing. Such a refusal, or the
// elector telling that the term ended, stops the controller in this
// replica (every controller of the term, for [LeadPerRuntime]); the
// Runtime resigns the term and campaigns again. A write made while the
// controller leads nothing (a goroutine it left behind) is refused the
// same way without reaching the state.
//
// New fails with an invalid-class error for a nil elector, an unknown
// scope, or a state that does not fence the elector's writes
// ([leadership.Elector.CheckState]).
func WithLeadership(el leadership.Elector, scope LeadershipScope) Option {
	return func(o *options) { o.leadership = leadershipOptions{elector: el, scope: scope, set: true} }
}

// validateLeadership checks the leadership options against st.
func (o *options) validateLeadership(st state.State) error {
	lo := o.leadership
	if !lo.set {
		return nil
	}
	if usercode.IsNil(lo.elector) {
		return state.NewInvalidError(nil, "runtime options: leadership: nil elector")
	}
	if lo.scope != LeadPerRuntime && lo.scope != LeadPerController {
		return state.NewInvalidError(nil, "runtime options: leadership: unknown scope %v", lo.scope)
	}
	var cerr error
	if p := usercode.Call(func() { cerr = lo.elector.CheckState(st) }); p != nil {
		return state.NewInvalidError(nil, "runtime options: leadership: the elector's CheckState panicked: %s", usercode.Sprint(p.Value))
	}
	if cerr != nil {
		return state.NewInvalidError(nil, "runtime options: leadership: %w", cerr)
	}
	return nil
}

// resignTimeout bounds the resignation of a term (a round trip to the
// elector's backend, which may be unreachable then).
const resignTimeout = 500 * time.Millisecond

// leaders holds a Runtime's elections.
type leaders struct {
	r    *Runtime
	opts leadershipOptions
	mu   sync.Mutex
	// groups are the elections by name; guarded by mu.
	groups map[string]*leaderGroup
}

// group returns the election of the controller name.
func (l *leaders) group(name string) *leaderGroup {
	election := RuntimeElection
	if l.opts.scope == LeadPerController {
		election = ControllerElectionPrefix + name
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.groups[election]
	if g == nil {
		g = &leaderGroup{l: l, election: election, changed: make(chan struct{})}
		l.groups[election] = g
	}
	return g
}

// lead wraps the runner of the controller name, whose reads and writes go
// through ad, so that it runs under the leadership of its election, its
// writes fenced (without leadership it returns rn).
func (r *Runtime) lead(name string, rn runner, ad *adapter.Adapter) runner {
	if r.leaders == nil {
		return rn
	}
	return &ledRunner{inner: rn, name: name, fencing: ad.Fenced(), grp: r.leaders.group(name), since: time.Now()}
}

// leaderGroup is one election: the controllers it decides run in each
// term this replica leads.
type leaderGroup struct {
	l        *leaders
	election string

	mu sync.Mutex
	// All fields below are guarded by mu.
	started bool
	// cur is the term being run, nil between terms.
	cur *engineTerm
	// changed is closed (and replaced) whenever cur changes.
	changed chan struct{}
	// failing is why the last campaign failed, "" while a campaign is
	// under way (it blocks while another replica leads) or succeeded: the
	// replica does not know its role while it is set.
	failing string
}

// campaignFailed records why a campaign failed ("" when it succeeded).
func (g *leaderGroup) campaignFailed(why string) {
	g.mu.Lock()
	g.failing = why
	g.mu.Unlock()
}

// campaignFailure is why the last campaign failed ("" when it did not).
func (g *leaderGroup) campaignFailure() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failing
}

// start starts the group's campaigns on a Runtime goroutine, once.
func (g *leaderGroup) start(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.started && g.l.r.group.Go(func() { g.loop(ctx) }) {
		g.started = true
	}
}

// loop campaigns, runs each term until it ends, resigns it and campaigns
// again, until ctx (Run's) is done.
func (g *leaderGroup) loop(ctx context.Context) {
	log := outcome.EngineLogger(g.l.r.logger).With(zap.String("election", g.election))
	opts := g.l.r.opts
	bo := retry.Backoff{Initial: opts.restartBackoffInitial, Max: opts.restartBackoffMax}.Sequence()
	for ctx.Err() == nil {
		t, err := g.campaign(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			g.campaignFailed(err.Error())
			delay := bo.Next()
			log.Warn("campaign failed", zap.Error(err), zap.Duration("retryIn", delay))
			if !retry.Wait(ctx, delay) {
				return
			}
			g.campaignFailed("") // a campaign is under way again
			continue
		}
		bo.Reset()
		g.campaignFailed("")
		log.Info("leading", zap.Uint64("term", t.number))
		why := g.run(ctx, t)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resignTimeout)
		rerr := t.resign(rctx)
		cancel()
		if ctx.Err() == nil {
			log.Info("leadership ended", zap.Uint64("term", t.number), zap.String("why", why), zap.NamedError("resignError", rerr))
		}
	}
}

// term is a term of the elector as the Runtime holds it: what it reads
// of it once (the elector is user code: every call of it is made inside
// a recovery).
type term struct {
	t      leadership.Term
	number uint64
	since  time.Time
	fence  state.Fence
	done   <-chan struct{}
}

// campaign calls the elector and reads the term it returns; a panic, a
// nil term or a term without a fence is an error (the term is resigned).
func (g *leaderGroup) campaign(ctx context.Context) (*term, error) {
	var (
		t   leadership.Term
		err error
	)
	if p := usercode.Call(func() { t, err = g.l.opts.elector.Campaign(ctx, g.election) }); p != nil {
		return nil, fmt.Errorf("the elector's Campaign panicked: %s", usercode.Sprint(p.Value))
	}
	if err != nil {
		return nil, err
	}
	if usercode.IsNil(t) {
		return nil, errors.New("the elector's Campaign returned no term and no error")
	}
	ht := &term{t: t}
	p := usercode.Call(func() { ht.number, ht.since, ht.fence, ht.done = t.Number(), t.Since(), t.Fence(), t.Done() })
	switch {
	case p != nil:
		err = fmt.Errorf("the elector's term panicked: %s", usercode.Sprint(p.Value))
	case usercode.IsNil(ht.fence):
		err = errors.New("the elector's term has no fence")
	default:
		return ht, nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resignTimeout)
	defer cancel()
	_ = ht.resign(rctx)
	return nil, err
}

// err is why the term's Done was closed.
func (t *term) err() (err error) {
	if p := usercode.Call(func() { err = t.t.Err() }); p != nil {
		return fmt.Errorf("the elector's term panicked: %s", usercode.Sprint(p.Value))
	}
	return err
}

// resign resigns the term.
func (t *term) resign(ctx context.Context) (err error) {
	if p := usercode.Call(func() { err = t.t.Resign(ctx) }); p != nil {
		return fmt.Errorf("the elector's Resign panicked: %s", usercode.Sprint(p.Value))
	}
	return err
}

// run runs term t: the controllers of the group join it until it ends —
// the elector ends it, a fenced write loses it, or ctx is done — and it
// returns once every one of them stopped, saying why the term ended.
func (g *leaderGroup) run(ctx context.Context, t *term) string {
	tctx, cancel := context.WithCancelCause(leadership.NewContext(ctx,
		leadership.TermInfo{Election: g.election, Number: t.number, Since: t.since}))
	et := &engineTerm{t: t, ctx: tctx, cancel: cancel, left: make(chan struct{})}
	g.publish(et)
	select {
	case <-t.done:
		cancel(fmt.Errorf("the term ended: %w", t.err()))
	case <-tctx.Done():
	}
	et.close()
	g.publish(nil)
	<-et.left
	if ctx.Err() != nil {
		return "the Runtime stopped"
	}
	return context.Cause(tctx).Error()
}

// publish makes et the group's current term.
func (g *leaderGroup) publish(et *engineTerm) {
	g.mu.Lock()
	g.cur = et
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
	g.l.r.idle.Ping()
}

// next waits for a term other than prev that the caller may join, joins
// it and returns it; nil when ctx is done first.
func (g *leaderGroup) next(ctx context.Context, prev *engineTerm) *engineTerm {
	for {
		g.mu.Lock()
		cur, ch := g.cur, g.changed
		g.mu.Unlock()
		if cur != nil && cur != prev && cur.join() {
			return cur
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
	}
}

// engineTerm is a term as the Runtime runs it: its controllers run under
// ctx, canceled when the term ends.
type engineTerm struct {
	t      *term
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu sync.Mutex
	// members counts the controllers running in the term, closed is set
	// once it takes no more; left is closed once closed with no
	// members. Guarded by mu.
	members int
	closed  bool
	left    chan struct{}
}

// join adds a controller to the term; false once the term is closed.
func (et *engineTerm) join() bool {
	et.mu.Lock()
	defer et.mu.Unlock()
	if et.closed {
		return false
	}
	et.members++
	return true
}

// leave removes a controller from the term.
func (et *engineTerm) leave() {
	et.mu.Lock()
	defer et.mu.Unlock()
	et.members--
	if et.closed && et.members == 0 {
		close(et.left)
	}
}

// close takes no more controllers; left closes once the last one left.
func (et *engineTerm) close() {
	et.mu.Lock()
	defer et.mu.Unlock()
	et.closed = true
	if et.members == 0 {
		close(et.left)
	}
}

// fenced is told of a write the state refused because the term's fence
// no longer stands: the term is lost.
func (et *engineTerm) fenced(err error) {
	et.cancel(fmt.Errorf("a write was fenced: %w", err))
}

// termRunner is a runner that can run once per term.
type termRunner interface {
	// runTerm runs the controller under one term until ctx is done;
	// first is set for the first term, whose QController queue holds
	// what existing does not list (see runner.run).
	runTerm(ctx context.Context, existing []resource.KindKey, first bool)
	// close ends the controller once it runs no more terms.
	close()
}

// ledRunner runs a controller under the leadership of its group.
type ledRunner struct {
	inner   runner
	name    string
	fencing *adapter.Fencing
	grp     *leaderGroup

	mu sync.Mutex
	// The fields below are guarded by mu: the controller's role since
	// when, and the term it leads (or last led).
	leading bool
	since   time.Time
	term    uint64
}

func (l *ledRunner) run(ctx context.Context, existing []resource.KindKey) {
	tr := l.inner.(termRunner)
	defer tr.close()
	l.grp.start(ctx)
	var prev *engineTerm
	for first := true; ; first = false {
		et := l.grp.next(ctx, prev)
		if et == nil {
			return
		}
		l.setRole(true, et.t.number)
		l.fencing.Lead(et.t.fence, et.fenced)
		tr.runTerm(et.ctx, existing, first)
		l.fencing.Standby()
		l.setRole(false, et.t.number)
		et.leave()
		prev = et
	}
}

// setRole records a change of role.
func (l *ledRunner) setRole(leading bool, term uint64) {
	l.mu.Lock()
	l.leading, l.since, l.term = leading, time.Now(), term
	l.mu.Unlock()
	l.grp.l.r.idle.Ping()
}

// leadership returns the controller's part in its election.
func (l *ledRunner) leadership() *observe.Leadership {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := &observe.Leadership{Election: l.grp.election, Role: observe.RoleStandby, Since: l.since, Term: l.term}
	if l.leading {
		st.Role = observe.RoleLeader
	}
	return st
}

func (l *ledRunner) sink() *telemetry.Controller { return l.inner.sink() }

func (l *ledRunner) status() observe.ControllerStatus {
	st := l.inner.status()
	st.Leadership = l.leadership()
	return st
}

// health: a standby has nothing of its own to be ready or live for, once
// it knows its role (its campaigns do not fail); a leader is as its
// controller is.
func (l *ledRunner) health(now time.Time, bound time.Duration) (string, string) {
	l.mu.Lock()
	leading := l.leading
	l.mu.Unlock()
	if leading {
		return l.inner.health(now, bound)
	}
	if why := l.grp.campaignFailure(); why != "" {
		return "its leadership role is unknown: its campaign in election " + l.grp.election + " failed: " + why, ""
	}
	return "", ""
}

func (l *ledRunner) activity() observe.ControllerActivity {
	a := l.inner.activity()
	l.mu.Lock()
	leading := l.leading
	l.mu.Unlock()
	if !leading {
		// A standby has no work of its own: another replica runs it.
		a.Busy, a.Why = false, "standby: another replica leads its election "+l.grp.election
		a.Due, a.InFlight, a.Delayed, a.NextDue = 0, 0, 0, time.Time{}
	}
	return a
}

func (c *controllerRunner) runTerm(ctx context.Context, _ []resource.KindKey, _ bool) { c.r.Run(ctx) }

func (c *controllerRunner) close() {}

func (c *qcontrollerRunner) runTerm(ctx context.Context, existing []resource.KindKey, first bool) {
	if !first {
		existing = c.r.InputKinds()
	}
	c.r.Serve(ctx, existing)
}

func (c *qcontrollerRunner) close() { c.r.Close() }

// newLeaders returns the elections of a Runtime with leadership options
// o, or nil without leadership.
func newLeaders(r *Runtime, o leadershipOptions) *leaders {
	if !o.set {
		return nil
	}
	return &leaders{r: r, opts: o, groups: map[string]*leaderGroup{}}
}

// leadershipFacts adds a controller's part in its election (nil without
// leadership) to what explain knows of it.
func leadershipFacts(cf *explain.ControllerFacts, l *observe.Leadership) {
	if l == nil {
		return
	}
	cf.Leadership, cf.Election = l.String(), l.Election
	if l.Role == observe.RoleStandby {
		cf.Standby, cf.StandbySince = true, l.Since
	}
}
