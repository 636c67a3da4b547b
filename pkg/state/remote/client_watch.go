package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cenkalti/backoff/v4"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// Watch implements state.CoreState (rules S8, S11–S13, N2).
func (c *client) Watch(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, opts ...state.WatchOption) error {
	p, o, err := backend.WatchArgs(ctx, ptr, ch, opts)
	if err != nil {
		return err
	}
	if err := c.validateType(p.Type()); err != nil {
		return err
	}
	req := &pb.WatchRequest{Pointer: pointerToPB(p), TailEvents: int64(o.TailEvents), SpecJson: c.unknown(p.Type())}
	if o.StartFromBookmark != nil {
		req.StartFromBookmark = o.StartFromBookmark
	}
	return c.startWatch(ctx, &remoteWatch{req: req, kind: p.Kind(), ch: ch})
}

// startKindWatch starts a WatchKind or WatchKindAggregated whose
// arguments backend.KindWatches validated (rules S9–S13, N2).
func (c *client) startKindWatch(ctx context.Context, kind resource.KindKey, ch chan<- state.Event, aggCh chan<- []state.Event, o state.WatchKindOptions) error {
	if err := c.validateType(kind.Type()); err != nil {
		return err
	}
	req := &pb.WatchRequest{
		Kind: kindToPB(kind), TailEvents: int64(o.TailEvents), BootstrapContents: o.BootstrapContents,
		LabelQueries: queriesToPB(o.LabelQueries), IdRegexp: idRegexpToPB(o.IDQuery), SpecJson: c.unknown(kind.Type()),
	}
	if o.StartFromBookmark != nil {
		req.StartFromBookmark = o.StartFromBookmark
	}
	return c.startWatch(ctx, &remoteWatch{req: req, kind: kind, ch: ch, aggCh: aggCh, bootstrap: o.BootstrapContents})
}

// remoteWatch is one watch of the client: its request, where it delivers,
// and how far it got.
type remoteWatch struct {
	c         *client
	req       *pb.WatchRequest
	kind      resource.KindKey
	ch        chan<- state.Event   // WatchKind, Watch
	aggCh     chan<- []state.Event // WatchKindAggregated
	bootstrap bool
	snaps     *kindSnaps

	// delivered tells that an event was delivered; bookmark is the
	// bookmark of the last delivered event, where a resumed watch starts
	// (nil when that event carried none: the watch cannot resume).
	delivered bool
	bookmark  state.Bookmark
	// booting holds the bootstrap contents until Bootstrapped arrives:
	// they are delivered together, so that a connection lost during the
	// bootstrap restarts it with nothing delivered twice.
	booting []state.Event
}

// stream is one call of a watch: its stream and the function that ends it.
type stream struct {
	s      pb.State_WatchClient
	cancel context.CancelFunc
}

// startWatch opens the watch's first call and, once the server set it up,
// hands it to the watch's goroutine. The server's refusal is the error.
func (c *client) startWatch(ctx context.Context, w *remoteWatch) error {
	w.c = c
	st, err := c.open(ctx, w.req)
	if err != nil {
		return err
	}
	w.snaps = c.snaps.acquire(w.kind)
	go w.run(ctx, st)
	return nil
}

// open starts a call of req and waits until the server set the watch up.
func (c *client) open(ctx context.Context, req *pb.WatchRequest) (stream, error) {
	sctx, cancel := context.WithCancel(ctx)
	s, err := c.rpc.Watch(sctx, c.callOpts...)
	if err == nil {
		err = send(s, &pb.WatchClientMessage{Request: req})
	}
	var m *pb.WatchServerMessage
	if err == nil {
		m, err = s.Recv()
	}
	if err == nil && !m.GetEstablished() {
		err = status.Error(codes.Internal, "remote: the server did not set the watch up")
	}
	if err == nil {
		err = send(s, &pb.WatchClientMessage{Credits: maxCredits})
	}
	if err != nil {
		cancel()
		if errors.Is(err, io.EOF) {
			err = status.Error(codes.Unavailable, "remote: the watch's call ended before it was set up")
		}
		return stream{}, fromStatus(err)
	}
	return stream{s: s, cancel: cancel}, nil
}

// send sends m on s. When the server ended the call first (gRPC's send
// then says io.EOF), the error is the status the call ended with — the
// server's refusal of the watch, say — read from s: io.EOF only when it
// ended with OK.
func send(s pb.State_WatchClient, m *pb.WatchClientMessage) error {
	err := s.Send(m)
	if !errors.Is(err, io.EOF) {
		return err
	}
	for {
		if _, err := s.Recv(); err != nil {
			return err
		}
	}
}

// run delivers the watch's events until its context is done or it ends
// with an Errored event, resuming it whenever its call breaks.
func (w *remoteWatch) run(ctx context.Context, st stream) {
	defer w.c.snaps.release(w.kind, w.snaps)
	for {
		err := w.follow(ctx, st)
		st.cancel()
		if err == nil || ctx.Err() != nil {
			return
		}
		if st, err = w.resume(ctx, err); err != nil {
			if ctx.Err() == nil {
				w.deliver(ctx, []state.Event{{Type: state.Errored, Error: err}})
			}
			return
		}
	}
}

// follow delivers the events of one call. It returns nil when the watch
// ended (an Errored event delivered, the context done) and the call's
// error when the call broke.
func (w *remoteWatch) follow(ctx context.Context, st stream) error {
	for {
		m, err := st.s.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return status.Error(codes.Unavailable, "remote: the server ended the watch's call")
			}
			return err
		}
		evs, ended := w.decode(m.Events)
		if !w.deliver(ctx, evs) || ended {
			return nil
		}
		if err := st.s.Send(&pb.WatchClientMessage{Credits: 1}); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		// io.EOF: the server ended the call; the next Recv returns what it
		// sent before, then its status.
	}
}

// decode decodes a message's events; ended tells that the watch ends
// with them (an Errored event, or an event that does not decode, which
// becomes one).
func (w *remoteWatch) decode(ms []*pb.Event) (evs []state.Event, ended bool) {
	evs = make([]state.Event, 0, len(ms))
	for _, m := range ms {
		ev, err := w.decodeEvent(m)
		if err != nil {
			return append(evs, state.Event{Type: state.Errored, Error: err}), true
		}
		evs = append(evs, ev)
		if ev.Type == state.Errored {
			return evs, true
		}
	}
	return evs, false
}

// decodeEvent decodes one event, sharing the decoded resources with the
// client's other watches (rule S7).
func (w *remoteWatch) decodeEvent(m *pb.Event) (state.Event, error) {
	ev := state.Event{Type: state.EventType(m.Type), Bookmark: m.Bookmark, Revision: m.Revision}
	switch ev.Type {
	case state.Created, state.Updated, state.Destroyed:
		var err error
		if m.Old != nil { // first: a lone watch keeps only the newest version, the Old of this change
			if ev.Old, err = w.resource(m.Old); err != nil {
				return ev, err
			}
		}
		if ev.Resource, err = w.resource(m.Resource); err != nil {
			return ev, err
		}
		if ev.Type == state.Destroyed {
			w.snaps.forget(ev.Resource.Metadata().ID())
		}
	case state.Bootstrapped:
	case state.Errored:
		ev.Error = errorFromPB(m.Error)
	default:
		return ev, fmt.Errorf("remote: the server sent an event of unknown type %d", m.Type)
	}
	return ev, nil
}

// resource returns the resource an event carries: the object another
// watch decoded for the same version, or a new one.
func (w *remoteWatch) resource(m *pb.Resource) (resource.Resource, error) {
	if m == nil || m.Metadata == nil {
		return nil, fmt.Errorf("remote: the server sent an event without a resource")
	}
	if m.PointerOnly {
		ptr, err := pointerFromPB(&pb.Pointer{Namespace: w.kind.Namespace(), Type: w.kind.Type(), Id: m.Metadata.Id})
		if err != nil {
			return nil, err
		}
		return backend.PointerOnly(ptr), nil
	}
	key := w.c.snaps.keyOf(m)
	if r := w.snaps.lookup(m.Metadata.Id, key); r != nil {
		return r, nil
	}
	r, err := w.c.decodeReply(m, w.kind)
	if err != nil {
		return nil, err
	}
	r.Metadata().Freeze() // shared from now on (see resource.Metadata.Freeze)
	return w.snaps.store(m.Metadata.Id, key, r), nil
}

// deliver hands events to the watcher (holding the bootstrap contents
// back until Bootstrapped) and records how far the watch got. It reports
// false when the context ended first.
func (w *remoteWatch) deliver(ctx context.Context, evs []state.Event) bool {
	if w.bootstrap && !w.delivered {
		w.booting = append(w.booting, evs...)
		if !slices.ContainsFunc(evs, func(ev state.Event) bool { return ev.Type == state.Bootstrapped || ev.Type == state.Errored }) {
			return true
		}
		evs, w.booting = w.booting, nil
	}
	if len(evs) == 0 {
		return true
	}
	if w.aggCh != nil {
		select {
		case w.aggCh <- evs:
		case <-ctx.Done():
			return false
		}
	} else {
		for _, ev := range evs {
			select {
			case w.ch <- ev:
			case <-ctx.Done():
				return false
			}
		}
	}
	w.delivered = true
	for _, ev := range evs {
		// Resuming from a bookmark is exact only when no event without
		// one came after it (the bootstrap's Created events precede
		// their Bootstrapped event, which carries one).
		w.bookmark = ev.Bookmark
	}
	return true
}

// resume opens a new call that continues the watch after the call that
// broke with cause: from the last bookmark delivered, or from the start
// when nothing was delivered. It retries with backoff while the server is
// unreachable, and returns the error that ends the watch otherwise: the
// server does not know the bookmark (a typed bookmark-unknown error), or
// refuses the watch, or the connection was closed.
func (w *remoteWatch) resume(ctx context.Context, cause error) (stream, error) {
	w.booting = nil
	req := w.req
	switch {
	case w.bookmark != nil:
		req = &pb.WatchRequest{
			Pointer: w.req.Pointer, Kind: w.req.Kind, LabelQueries: w.req.LabelQueries, IdRegexp: w.req.IdRegexp,
			StartFromBookmark: w.bookmark, Resume: true, SpecJson: w.req.SpecJson,
		}
	case w.delivered:
		return stream{}, bookmarkUnknown(fmt.Errorf("the last event the watch delivered carried no bookmark: %w", cause))
	}
	b := backoff.NewExponentialBackOff(backoff.WithInitialInterval(w.c.o.backoffMin),
		backoff.WithMaxInterval(w.c.o.backoffMax), backoff.WithMaxElapsedTime(0))
	for {
		t := time.NewTimer(b.NextBackOff())
		select {
		case <-ctx.Done():
			t.Stop()
			return stream{}, ctx.Err()
		case <-t.C:
		}
		st, err := w.c.open(ctx, req)
		if err == nil {
			return st, nil
		}
		if ctx.Err() != nil {
			return stream{}, ctx.Err()
		}
		if !retryable(err) {
			if req.Resume && (IsBookmarkUnknownError(err) || state.IsBufferOverrunError(err)) {
				return stream{}, err
			}
			return stream{}, fmt.Errorf("remote: the watch lost its connection and the server refused to resume it: %w", err)
		}
	}
}

// retryable reports whether a call that failed with err may succeed when
// tried again: the server or the connection to it is down for now.
func retryable(err error) bool {
	var e *Error
	if errors.As(err, &e) && len(e.classes) > 0 {
		return false
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Internal, codes.Unknown, codes.DeadlineExceeded, codes.Aborted:
		return true
	default:
		return false
	}
}
