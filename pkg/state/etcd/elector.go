package etcd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/leadership"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Elector is a [leadership.Elector] on etcd: the replicas of a Runtime
// that share a state (the same cluster and prefix) campaign through it,
// and the Runtime runs each controller in the replica that leads its
// election (runtime.WithLeadership).
//
// Each Elector keeps one etcd session while it campaigns or leads: a lease
// of [WithLeaseTTL] that the client keeps alive, to which every candidate
// key of the replica is bound. An election is a key prefix (under the
// state's prefix, beside the resources: prefix + "%leader/" + the
// election's name with "%" and "/" escaped as "%25" and "%2F", as in the
// resources' keys: "/mydaemon/%leader/controller%2FBtoC/" for the
// controller BtoC's election); a candidate puts its key there (named by
// its lease's ID, in hex) and leads once every
// key created before it is gone (etcd's concurrency.Election). A term is
// one such leadership; its number is its key's create revision, and its
// fence ([leadership.Term.Fence]) makes the etcd state add to a write's
// transaction the condition that the key still exists with that create
// revision: a write after the term's key was deleted — the lease expired
// (the leader was paused, killed or cut off for longer than the TTL), the
// leader resigned — fails with an error of the fenced class
// ([state.IsFencedError]), and nothing is written.
//
// A term ends (its Done channel closes) when the elector sees that the
// lease expired or could not be kept alive (the client heard nothing from
// etcd for the TTL) or that the key is gone; a standby takes over once
// etcd expires the lease: within the TTL after the leader's last
// keep-alive, plus the time etcd takes to notice (up to half a second)
// and a round trip. The TTL is the one etcd grants: etcd grants no lease
// under 1.5 times its election timeout, rounded up to whole seconds (2 s
// with its default timeout of 1 s), and the elector logs a WARN when it
// grants more than [WithLeaseTTL] asked. A leader that stops cleanly
// resigns: its successor takes over at once.
//
// Spreading: the elector watches every election of the prefix and
// balances them over the replicas that campaign, acting on its own
// candidacies only. A replica leading at least two elections more than
// the next candidate in line of one of them hands that one over
// ([leadership.ErrHandover]; the Runtime stops the controller, resigns,
// and campaigns again at the back of the line); a replica next in line
// behind a leader that it could not relieve moves to the back of the line
// when a later candidate could. With every replica campaigning in every
// election, the number of elections each replica leads ends within one
// of the others'. [WithoutSpread] turns it off: the first candidate in
// line leads until it stops.
//
// An Elector starts nothing until its first Campaign; [Elector.Close]
// ends its session (revoking the lease: a term still held ends at once
// for the other replicas) and its goroutines.
type Elector struct {
	cli       *clientv3.Client
	root      string // the elections' prefix
	ttl       int    // the lease's TTL, in seconds
	name      string // this replica's name, the value of its candidate keys
	log       *zap.Logger
	clusterID uint64
	spread    bool

	// sessMu serializes the creation of sessions.
	sessMu sync.Mutex

	mu sync.Mutex
	// All fields below are guarded by mu.
	closed bool
	// sess is the current session (nil before the first Campaign, or
	// after it expired until the next Campaign makes a new one).
	sess *concurrency.Session
	// bgCtx ends the background work: the session's keep-alive and the
	// watcher of the elections; bgCancel cancels it, bgDone is closed
	// when the watcher exited (nil while none runs).
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bgDone   chan struct{}
	// elections are the elections this replica campaigns in or leads,
	// by name.
	elections map[string]*candidacy

	// kick asks the watcher for a review (buffered 1).
	kick chan struct{}
}

var _ leadership.Elector = (*Elector)(nil)

// candidacy is this replica's part in one election: a campaign, then a
// term.
type candidacy struct {
	name   string
	prefix string // the election's key prefix, without the trailing "/"
	// requeue asks a waiting campaign to move to the back of the line
	// (buffered 1).
	requeue chan struct{}
	// term is the term while this replica leads; guarded by Elector.mu.
	term *term
}

// ElectorOption configures [NewElector].
type ElectorOption func(*electorOptions)

type electorOptions struct {
	prefix         string
	ttl            time.Duration
	name           string
	logger         *zap.Logger
	spread         bool
	connectTimeout time.Duration
}

// DefaultLeaseTTL is the TTL of an [Elector]'s lease unless
// [WithLeaseTTL] says otherwise: how long a leader may go unheard before
// its standby takes over.
const DefaultLeaseTTL = 10 * time.Second

// WithElectionPrefix sets the prefix of the state the replicas share
// (what [WithPrefix] gives [New]; the default is [DefaultPrefix]): the
// elections live under it.
func WithElectionPrefix(prefix string) ElectorOption {
	return func(o *electorOptions) {
		if prefix != "" {
			o.prefix = prefix
		}
	}
}

// WithLeaseTTL sets the TTL of the elector's lease, rounded up to whole
// seconds (etcd's unit), at least one (default [DefaultLeaseTTL]).
func WithLeaseTTL(d time.Duration) ElectorOption {
	return func(o *electorOptions) { o.ttl = d }
}

// WithReplicaName names this replica in its candidate keys (default
// host name and process ID).
func WithReplicaName(name string) ElectorOption {
	return func(o *electorOptions) {
		if name != "" {
			o.name = name
		}
	}
}

// WithElectorLogger sets the logger of the elector's background work (a
// nil logger logs nothing).
func WithElectorLogger(l *zap.Logger) ElectorOption {
	return func(o *electorOptions) {
		if l == nil {
			l = zap.NewNop()
		}
		o.logger = l
	}
}

// WithoutSpread turns the spreading of elections over the replicas off:
// the first candidate in line leads until it stops or loses its lease.
func WithoutSpread() ElectorOption {
	return func(o *electorOptions) { o.spread = false }
}

// leaderPart is the part of the state's prefix under which elections
// live: a raw "%" is never the start of an escaped namespace (which
// escapes "%" as "%25"), so no kind's keys are under it.
const leaderPart = "%leader/"

// NewElector returns an elector on the etcd cluster that cli talks to. It
// checks that etcd answers within [DefaultConnectTimeout] (and ctx), and
// starts nothing: sessions and goroutines start with the first
// Campaign, and end with [Elector.Close]. A TTL that is not positive is
// an invalid-class error.
func NewElector(ctx context.Context, cli *clientv3.Client, opts ...ElectorOption) (*Elector, error) {
	if cli == nil {
		return nil, state.NewInvalidError(nil, "etcd elector: nil client")
	}
	host, _ := os.Hostname()
	o := electorOptions{
		prefix: DefaultPrefix, ttl: DefaultLeaseTTL, logger: zap.NewNop(), spread: true,
		name: host + "/" + strconv.Itoa(os.Getpid()), connectTimeout: DefaultConnectTimeout,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.ttl <= 0 {
		return nil, state.NewInvalidError(nil, "etcd elector: lease TTL %v: need > 0", o.ttl)
	}
	pctx, cancel := context.WithTimeout(ctx, o.connectTimeout)
	defer cancel()
	resp, err := cli.Get(pctx, o.prefix, clientv3.WithCountOnly())
	if err != nil {
		return nil, fmt.Errorf("etcd elector: etcd at %v did not answer within %s: %w", cli.Endpoints(), o.connectTimeout, err)
	}
	return &Elector{
		cli:       cli,
		root:      o.prefix + leaderPart,
		ttl:       int((o.ttl + time.Second - 1) / time.Second),
		name:      o.name,
		log:       o.logger,
		clusterID: resp.Header.GetClusterId(),
		spread:    o.spread,
		elections: map[string]*candidacy{},
		kick:      make(chan struct{}, 1),
	}, nil
}

// CheckState implements [leadership.Elector]: st must be an etcd state
// of this package on the same cluster.
func (e *Elector) CheckState(st state.State) error {
	fc, ok := st.(state.Fencer)
	if !ok {
		return state.NewInvalidError(nil, "etcd elector: state %T does not check fences", st)
	}
	return fc.CheckFence(&fence{cluster: e.clusterID, desc: "a probe"})
}

// Campaign implements [leadership.Elector]: it puts this replica's
// candidate key in the election and waits until it leads. While it waits,
// a lost session makes it campaign again with a new one, and the
// spreading may move it to the back of the line. An empty name or a
// second campaign in one election is an invalid-class error; a closed
// elector refuses with an error.
func (e *Elector) Campaign(ctx context.Context, name string) (leadership.Term, error) {
	if name == "" {
		return nil, state.NewInvalidError(nil, "etcd elector: empty election name")
	}
	cd, err := e.enter(name)
	if err != nil {
		return nil, err
	}
	t, err := e.campaign(ctx, cd)
	if err != nil {
		e.leave(cd)
		return nil, err
	}
	return t, nil
}

// enter registers a campaign in the election name and starts the
// background work if it does not run.
func (e *Elector) enter(name string) (*candidacy, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errClosed
	}
	if _, dup := e.elections[name]; dup {
		return nil, state.NewInvalidError(nil, "etcd elector: already campaigning in or leading election %q", name)
	}
	cd := &candidacy{name: name, prefix: e.root + escaper.Replace(name), requeue: make(chan struct{}, 1)}
	e.elections[name] = cd
	if e.bgCtx == nil {
		ctx, cancel := context.WithCancel(e.cli.Ctx())
		done := make(chan struct{})
		e.bgCtx, e.bgCancel, e.bgDone = ctx, cancel, done
		go func() {
			defer close(done)
			e.watch(ctx)
		}()
	}
	return cd, nil
}

// leave ends a candidacy (its campaign failed, or its term was resigned).
func (e *Elector) leave(cd *candidacy) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.elections[cd.name] == cd {
		delete(e.elections, cd.name)
	}
}

// errClosed is the error of a campaign of a closed elector.
var errClosed = errors.New("etcd elector: closed")

// campaignRetry bounds the wait before campaigning again after an error
// of etcd (the client retries by itself within a call).
const campaignRetry = 500 * time.Millisecond

func (e *Elector) campaign(ctx context.Context, cd *candidacy) (*term, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sess, err := e.session(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, errClosed) {
				return nil, err
			}
			e.log.Warn("etcd elector: no session", zap.String("election", cd.name), zap.Error(err))
			if !wait(ctx, campaignRetry) {
				return nil, ctx.Err()
			}
			continue
		}
		t, err := e.campaignOnce(ctx, cd, sess)
		if t != nil || ctx.Err() != nil {
			return t, ctx.Err()
		}
		if err != nil {
			e.log.Warn("etcd elector: campaign failed", zap.String("election", cd.name), zap.Error(err))
			if !wait(ctx, campaignRetry) {
				return nil, ctx.Err()
			}
		}
	}
}

// campaignOnce campaigns with sess until it leads (it returns the term),
// the session ends or the spreading moves it back (it returns neither a
// term nor an error), or it fails.
func (e *Elector) campaignOnce(ctx context.Context, cd *candidacy, sess *concurrency.Session) (*term, error) {
	select {
	case <-cd.requeue: // a request that came after the previous campaign
	default:
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-sess.Done():
		case <-cd.requeue:
		case <-stop:
		}
		cancel()
	}()
	el := concurrency.NewElection(sess, cd.prefix)
	// Campaign deletes its key when cctx ends before it leads.
	if err := el.Campaign(cctx, e.name); err != nil {
		if cctx.Err() != nil {
			return nil, nil // moved back, or the session ended: again
		}
		return nil, err
	}
	// Campaign returns once every key created before its own is gone,
	// without checking that its own is still there (its lease may have
	// expired meanwhile).
	resp, err := e.cli.Get(ctx, el.Key())
	if err != nil {
		_ = el.Resign(context.WithoutCancel(ctx))
		return nil, err
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != el.Rev() {
		return nil, nil
	}
	t := &term{
		e: e, cd: cd, el: el, sess: sess, since: time.Now(), done: make(chan struct{}),
		fence: &fence{
			cluster: e.clusterID, key: el.Key(), rev: el.Rev(),
			desc: fmt.Sprintf("leadership of election %q, term %d", cd.name, el.Rev()),
		},
	}
	e.mu.Lock()
	cd.term = t
	select {
	case <-cd.requeue: // too late: it leads
	default:
	}
	e.mu.Unlock()
	// A review that ran meanwhile did not know the term.
	select {
	case e.kick <- struct{}{}:
	default:
	}
	go t.watchSession() // ends with the term or the session
	return t, nil
}

// session returns the current session, or makes a new one when there is
// none or it ended. The lease is granted under ctx; its keep-alive runs
// until the elector is closed (or the lease expires).
func (e *Elector) session(ctx context.Context) (*concurrency.Session, error) {
	e.sessMu.Lock()
	defer e.sessMu.Unlock()
	e.mu.Lock()
	s, bg, closed := e.sess, e.bgCtx, e.closed
	e.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	if s != nil {
		select {
		case <-s.Done():
		default:
			return s, nil
		}
	}
	lease, err := e.cli.Grant(ctx, int64(e.ttl))
	if err != nil {
		return nil, err
	}
	if lease.TTL > int64(e.ttl) {
		e.log.Warn("etcd elector: etcd granted a longer lease than asked: a leader's controllers move to a standby within the granted TTL "+
			"(etcd grants no lease under 1.5 times its election timeout, rounded up to whole seconds)",
			zap.Duration("asked", time.Duration(e.ttl)*time.Second), zap.Duration("granted", time.Duration(lease.TTL)*time.Second))
	}
	s, err = concurrency.NewSession(e.cli, concurrency.WithTTL(e.ttl), concurrency.WithLease(lease.ID), concurrency.WithContext(bg))
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.sess = s
	e.mu.Unlock()
	return s, nil
}

// Close ends the elector: its terms end, its session's lease is revoked
// (within the TTL; the other replicas' campaigns go on at once), and its
// goroutines exit before it returns. Campaigns still waiting return an
// error. Idempotent.
func (e *Elector) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	s, cancel, done := e.sess, e.bgCancel, e.bgDone
	var terms []*term
	for _, cd := range e.elections {
		if cd.term != nil {
			terms = append(terms, cd.term)
		}
	}
	e.mu.Unlock()
	for _, t := range terms {
		t.end(fmt.Errorf("%w: the elector was closed", leadership.ErrLost))
	}
	var err error
	if s != nil {
		err = s.Close()
	}
	if cancel != nil {
		cancel()
	}
	if done != nil {
		<-done
	}
	return err
}

// wait waits for d or until ctx is done; false when ctx is done.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// term is a [leadership.Term] of an Elector.
type term struct {
	e     *Elector
	cd    *candidacy
	el    *concurrency.Election
	sess  *concurrency.Session
	since time.Time
	fence *fence

	done     chan struct{}
	endOnce  sync.Once
	errMu    sync.Mutex
	err      error      // why done was closed; guarded by errMu
	resignMu sync.Mutex // serializes Resign
	// resigned is set once Resign was called.
	resigned atomic.Bool
}

var _ leadership.Term = (*term)(nil)

func (t *term) Election() string      { return t.cd.name }
func (t *term) Number() uint64        { return uint64(t.fence.rev) }
func (t *term) Since() time.Time      { return t.since }
func (t *term) Fence() state.Fence    { return t.fence }
func (t *term) Done() <-chan struct{} { return t.done }

func (t *term) Err() error {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	return t.err
}

// end closes done with err as the reason, once.
func (t *term) end(err error) {
	t.endOnce.Do(func() {
		t.errMu.Lock()
		t.err = err
		t.errMu.Unlock()
		close(t.done)
	})
}

// handingOver reports whether the term ended with a handover that the
// leader has not completed (by Resign) yet.
func (t *term) handingOver() bool {
	select {
	case <-t.done:
	default:
		return false
	}
	return !t.resigned.Load() && errors.Is(t.Err(), leadership.ErrHandover)
}

// watchSession ends the term when its session ends.
func (t *term) watchSession() {
	select {
	case <-t.sess.Done():
		t.end(fmt.Errorf("%w: the lease of election %q, term %d, expired or could not be kept alive", leadership.ErrLost, t.cd.name, t.fence.rev))
	case <-t.done:
	}
}

// Resign implements [leadership.Term]: it deletes the term's key if it is
// still the term's, and ends the candidacy, so that this replica may
// campaign again.
func (t *term) Resign(ctx context.Context) error {
	t.resignMu.Lock()
	defer t.resignMu.Unlock()
	if t.resigned.Load() {
		return nil
	}
	t.resigned.Store(true)
	t.end(fmt.Errorf("%w: resigned", leadership.ErrLost))
	err := t.el.Resign(ctx)
	t.e.mu.Lock()
	if t.cd.term == t {
		t.cd.term = nil
	}
	t.e.mu.Unlock()
	t.e.leave(t.cd)
	return err
}

// fence is the fence of a term: its key still exists with the term's
// create revision.
type fence struct {
	cluster uint64
	key     string
	rev     int64
	desc    string
}

func (f *fence) String() string { return f.desc }

// standing reports whether the read of the fence's key (the response of
// a fenced transaction's Else) shows the fence standing.
func (f *fence) standing(kvs []*mvccpb.KeyValue) bool {
	return len(kvs) > 0 && kvs[0].CreateRevision == f.rev
}

var _ state.Fencer = (*core)(nil)

// CheckFence implements [state.Fencer]: the state checks the fences of
// the terms of an [Elector] on the same etcd cluster.
func (c *core) CheckFence(f state.Fence) error {
	ef, ok := f.(*fence)
	if !ok {
		return state.NewInvalidError(nil, "etcd state: fence %v (%T) is not an etcd elector's", f, f)
	}
	if ef.cluster != c.clusterID {
		return state.NewInvalidError(nil, "etcd state: fence %v is of another etcd cluster (%x, not %x)", f, ef.cluster, c.clusterID)
	}
	return nil
}

// fenceOf returns the fence of a write's context (nil: none), or an
// invalid-class error for one the state does not check.
func (c *core) fenceOf(ctx context.Context) (*fence, error) {
	f := state.FenceOf(ctx)
	if f == nil {
		return nil, nil
	}
	if err := c.CheckFence(f); err != nil {
		return nil, err
	}
	return f.(*fence), nil
}

// refused returns the fenced error of a write whose transaction failed
// because the fence no longer stands (its key's read is the Else
// branch's response i), or nil.
func (f *fence) refused(tx *clientv3.TxnResponse, i int, ptr resource.Pointer) error {
	if f == nil || tx.Succeeded {
		return nil
	}
	if f.standing(tx.Responses[i].GetResponseRange().Kvs) {
		return nil
	}
	return state.NewFencedError(resource.PointerOf(ptr), "write refused: the %s has ended", f)
}
