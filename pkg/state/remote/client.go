package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// ClientOption configures a client made by [NewClient].
type ClientOption func(*clientOptions)

type clientOptions struct {
	unstructured           bool
	dryRun                 bool
	maxMessage             int
	backoffMin, backoffMax time.Duration
}

// WithClientMaxMessageSize bounds the size of the messages the client
// sends and receives, in bytes (default [DefaultMaxMessageSize]); a
// request larger than it fails with ResourceExhausted before it is sent.
// Give the server the same bound ([WithMaxMessageSize]).
func WithClientMaxMessageSize(n int) ClientOption {
	return func(o *clientOptions) {
		if n > 0 {
			o.maxMessage = n
		}
	}
}

// WithReconnectBackoff sets the backoff between the attempts of a watch
// to resume after its connection broke: from min, doubling up to max
// (defaults 50 ms and 5 s). A watch retries until its context is done,
// the server refuses its bookmark, or the connection is closed.
func WithReconnectBackoff(minimum, maximum time.Duration) ClientOption {
	return func(o *clientOptions) {
		if minimum > 0 && maximum >= minimum {
			o.backoffMin, o.backoffMax = minimum, maximum
		}
	}
}

// WithDryRun makes a client whose writes are dry runs (rule N5): its
// Create and Update ask the server to check the write (a CheckWrite call)
// as it checks the write itself — the request, the spec's strict
// decoding, the access rules, the served state's checks against the
// stored version — and write nothing. Each returns the error the write
// would meet at those checks, or nil, and sets nothing in the resource.
// Its Destroy is refused (an invalid-class error, nothing sent), and so
// are the helpers built on it; its reads and watches are the served
// state's. A server without CheckWrite (an older one) answers
// Unimplemented: nothing is written either way.
func WithDryRun() ClientOption {
	return func(o *clientOptions) { o.dryRun = true }
}

// client is the core of the remote State; NewClient wraps it with
// state.WrapCore.
type client struct {
	backend.KindWatches

	rpc      pb.StateClient
	coder    coder
	o        clientOptions
	callOpts []grpc.CallOption
	snaps    *snapshots
}

var (
	_ state.CoreState        = (*client)(nil)
	_ state.TypeValidator    = (*client)(nil)
	_ state.KindHeadReporter = (*client)(nil)
	_ state.RevisionReporter = (*client)(nil)
)

// NewClient returns a state.State that reads, writes and watches the state
// served on conn (by a [Server]), encoding and decoding specs with reg: the
// registry must know every type the client reads or writes, in the
// encoding the server's registry uses. It contacts nobody: the calls do.
// A nil conn or reg is an invalid-class error.
func NewClient(conn grpc.ClientConnInterface, reg *codec.Registry, opts ...ClientOption) (state.State, error) {
	if usercode.IsNil(conn) {
		return nil, state.NewInvalidError(nil, "remote: NewClient: nil connection")
	}
	if reg == nil {
		return nil, state.NewInvalidError(nil, "remote: NewClient: nil codec registry")
	}
	o := clientOptions{maxMessage: DefaultMaxMessageSize, backoffMin: 50 * time.Millisecond, backoffMax: 5 * time.Second}
	opt.Apply(&o, opts)
	c := &client{
		rpc:      pb.NewStateClient(conn),
		coder:    coder{reg: reg},
		o:        o,
		callOpts: []grpc.CallOption{grpc.MaxCallRecvMsgSize(o.maxMessage), grpc.MaxCallSendMsgSize(o.maxMessage)},
		snaps:    newSnapshots(),
	}
	c.KindWatches.Start = c.startKindWatch
	return state.WrapCore(c), nil
}

// known checks a pointer or kind the client is about to send: valid, of a
// type the client's registry knows, on a live context.
func (c *client) known(ctx context.Context, k resource.Kind, what string) error {
	if err := resource.ValidateKind(k); err != nil {
		return err
	}
	if err := c.validateType(k.Type()); err != nil {
		return err
	}
	return backend.Live(ctx, nil, what)
}

// Get implements state.CoreState.
func (c *client) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	if err := c.known(ctx, ptr, "get"); err != nil {
		return nil, err
	}
	var o state.GetOptions
	opt.Apply(&o, opts)
	resp, err := c.rpc.Get(ctx, &pb.GetRequest{Pointer: pointerToPB(ptr), SpecJson: c.unknown(ptr.Type())}, c.callOpts...)
	if err != nil {
		return nil, fromStatus(err)
	}
	if o.Revision != nil {
		*o.Revision = resp.GetRevision()
	}
	return c.decodeReply(resp.GetResource(), nil)
}

// decodeReply decodes a resource the server sent (of kind, when its
// metadata does not name one); a resource that does not decode is an
// error naming it.
func (c *client) decodeReply(m *pb.Resource, kind resource.Kind) (resource.Resource, error) {
	var r resource.Resource
	var err error
	if typ := m.GetMetadata().GetType(); c.unknown(typ) || (typ == "" && kind != nil && c.unknown(kind.Type())) {
		r, err = decodeUnstructured(m, kind)
	} else {
		r, err = c.coder.decode(m, kind)
	}
	if err != nil {
		return nil, fmt.Errorf("remote: the server sent a resource that does not decode: %w", err)
	}
	return r, nil
}

// List implements state.CoreState.
func (c *client) List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	if err := c.known(ctx, kind, "list"); err != nil {
		return resource.List{}, err
	}
	var o state.ListOptions
	opt.Apply(&o, opts)
	req := &pb.ListRequest{Kind: kindToPB(kind), LabelQueries: queriesToPB(o.LabelQueries), IdRegexp: idRegexpToPB(o.IDQuery), SpecJson: c.unknown(kind.Type())}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.rpc.List(lctx, req, c.callOpts...)
	if err != nil {
		return resource.List{}, fromStatus(err)
	}
	var list resource.List
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return list, nil
		}
		if err != nil {
			return resource.List{}, fromStatus(err)
		}
		if list.Items == nil {
			list.Items = make([]resource.Resource, 0, len(m.Resources))
			if o.Revision != nil {
				*o.Revision = m.GetRevision()
			}
		}
		for _, rm := range m.Resources {
			r, err := c.decodeReply(rm, kind)
			if err != nil {
				return resource.List{}, err
			}
			list.Items = append(list.Items, r)
		}
	}
}

// encodeArg encodes a resource the caller passes to a write, refusing a
// bad one with an invalid-class error before anything is sent.
func (c *client) encodeArg(ctx context.Context, r resource.Resource, what string) (*pb.Resource, error) {
	if usercode.IsNil(r) || usercode.IsNil(r.Metadata()) {
		return nil, state.NewInvalidError(nil, "remote: %s: nil resource or metadata", what)
	}
	if err := resource.ValidatePointer(r.Metadata()); err != nil {
		return nil, err
	}
	if err := backend.Live(ctx, r.Metadata(), what); err != nil {
		return nil, err
	}
	if cc, ok := r.(resource.CopyChecker); ok {
		if err := cc.CopyError(); err != nil {
			return nil, state.NewInvalidError(r.Metadata(), "%s: %w", what, err)
		}
	}
	if u, ok := r.(*Unstructured); ok && c.unknown(u.md.Type()) {
		return encodeUnstructured(u)
	}
	return c.coder.encode(r, false, false)
}

// Create implements state.CoreState (rule S1).
func (c *client) Create(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error {
	m, err := c.encodeArg(ctx, r, "create")
	if err != nil {
		return err
	}
	var o state.CreateOptions
	opt.Apply(&o, opts)
	req := &pb.CreateRequest{Resource: m, Owner: o.Owner}
	if c.o.dryRun {
		_, err := c.rpc.CheckWrite(ctx, &pb.CheckWriteRequest{Create: req}, c.callOpts...)
		return fromStatus(err)
	}
	resp, err := c.rpc.Create(ctx, req, c.callOpts...)
	if err != nil {
		return fromStatus(err)
	}
	return setWritten(r.Metadata(), resp)
}

// Update implements state.CoreState (rules S2, S7).
func (c *client) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	m, err := c.encodeArg(ctx, r, "update")
	if err != nil {
		return err
	}
	if isShared(r) {
		return state.NewInvalidError(r.Metadata(), "update of a shared read-only snapshot: DeepCopy it first (rule S7)")
	}
	o := state.DefaultUpdateOptions()
	opt.Apply(&o, opts)
	req := &pb.UpdateRequest{Resource: m, Owner: o.Owner}
	if o.ExpectedPhase != nil {
		p := pb.Phase(*o.ExpectedPhase)
		req.ExpectedPhase = &p
	}
	if c.o.dryRun {
		_, err := c.rpc.CheckWrite(ctx, &pb.CheckWriteRequest{Update: req}, c.callOpts...)
		return fromStatus(err)
	}
	resp, err := c.rpc.Update(ctx, req, c.callOpts...)
	if err != nil {
		return fromStatus(err)
	}
	return setWritten(r.Metadata(), resp)
}

// setWritten sets what the server wrote back into the caller's metadata.
func setWritten(md *resource.Metadata, resp *pb.WriteResponse) error {
	created, err := timeFromPB(resp.GetCreatedSeconds(), resp.GetCreatedNanos())
	if err != nil {
		return fmt.Errorf("remote: the server answered a write with a bad time: %w", err)
	}
	updated, err := timeFromPB(resp.GetUpdatedSeconds(), resp.GetUpdatedNanos())
	if err != nil {
		return fmt.Errorf("remote: the server answered a write with a bad time: %w", err)
	}
	md.SetVersion(resource.NewVersion(resp.GetVersion()))
	md.SetCreated(created)
	md.SetUpdated(updated)
	return nil
}

// Destroy implements state.CoreState (rule S3).
func (c *client) Destroy(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) error {
	if err := resource.ValidatePointer(ptr); err != nil {
		return err
	}
	if err := c.known(ctx, ptr, "destroy"); err != nil {
		return err
	}
	if c.o.dryRun {
		return state.NewInvalidError(ptr, "remote: a dry-run client (WithDryRun) checks creates and updates only; Destroy is refused, nothing sent")
	}
	var o state.DestroyOptions
	opt.Apply(&o, opts)
	_, err := c.rpc.Destroy(ctx, &pb.DestroyRequest{Pointer: pointerToPB(ptr), Owner: o.Owner}, c.callOpts...)
	return fromStatus(err)
}

// ValidateType implements state.TypeValidator: the client stores the
// types its registry encodes.
func (c *client) ValidateType(kind resource.Kind) error {
	return c.validateType(kind.Type())
}

// KindHead implements state.KindHeadReporter by asking the server; an
// error matching errors.ErrUnsupported when the served state does not
// report kind heads.
func (c *client) KindHead(ctx context.Context, kind resource.Kind) (state.Bookmark, error) {
	if err := c.known(ctx, kind, "kind head"); err != nil {
		return nil, err
	}
	resp, err := c.rpc.KindHead(ctx, &pb.KindHeadRequest{Kind: kindToPB(kind)}, c.callOpts...)
	if err != nil {
		return nil, questionError(err)
	}
	return resp.GetBookmark(), nil
}

// Revision implements state.RevisionReporter by asking the server; an
// error matching errors.ErrUnsupported when the served state does not
// number its changes.
func (c *client) Revision(ctx context.Context) (uint64, error) {
	if err := backend.Live(ctx, nil, "revision"); err != nil {
		return 0, err
	}
	resp, err := c.rpc.Revision(ctx, &pb.RevisionRequest{}, c.callOpts...)
	if err != nil {
		return 0, questionError(err)
	}
	return resp.GetRevision(), nil
}

// KindRevision implements state.RevisionReporter by asking the server.
func (c *client) KindRevision(ctx context.Context, kind resource.Kind) (last, at uint64, err error) {
	if err := c.known(ctx, kind, "kind revision"); err != nil {
		return 0, 0, err
	}
	resp, err := c.rpc.KindRevision(ctx, &pb.KindRevisionRequest{Kind: kindToPB(kind)}, c.callOpts...)
	if err != nil {
		return 0, 0, questionError(err)
	}
	return resp.GetLast(), resp.GetAt(), nil
}

// questionError is the client's error of a question the server refused:
// one matching errors.ErrUnsupported when the served state cannot answer
// it (Unimplemented).
func questionError(err error) error {
	if status.Code(err) == codes.Unimplemented {
		return fmt.Errorf("remote: %s: %w", status.Convert(err).Message(), errors.ErrUnsupported)
	}
	return fromStatus(err)
}
