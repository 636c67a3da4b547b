package remote

import (
	"context"
	"errors"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// CheckWrite serves a client's dry-run write ([WithDryRun], rule N5): the
// request's Create or Update, served as Create and Update serve it, to
// the served state's checks ([checkState]) instead of the state.
func (s *Server) CheckWrite(ctx context.Context, req *pb.CheckWriteRequest) (_ *pb.CheckWriteResponse, err error) {
	defer s.recoverCall("CheckWrite", &err)
	if err := s.wire.malformed(req); err != nil {
		return nil, err
	}
	c, u := req.GetCreate(), req.GetUpdate()
	switch {
	case (c == nil) == (u == nil):
		return nil, invalid("check write: want exactly one of create and update")
	case c != nil:
		_, err = s.write(ctx, c, c.GetResource(), createFunc(ctx, c), true)
	default:
		_, err = s.write(ctx, u, u.GetResource(), updateFunc(ctx, u), true)
	}
	if err != nil {
		return nil, err
	}
	return &pb.CheckWriteResponse{}, nil
}

// errChecked is what a [checkState]'s write returns when every check
// passed: the access guard audits the checked write with it as its
// outcome (nothing was written), and the server answers the check with
// success.
var errChecked = errors.New("remote: checked only (CheckWrite): nothing written")

// checkState is the served state as a CheckWrite sees it: its Create and
// Update make the checks the served state makes of such a write before
// writing — the kind is one it stores (state.ValidateType), the resource
// is valid (state.ValidateResource), and against the stored version: a
// Create of a resource that exists is a conflict; an Update of one that
// does not is not found, and backend.CheckUpdate (which the states' own
// Updates call) refuses a stale version or incarnation, another owner and
// another phase than expected — then return errChecked, having written
// nothing. Its reads are the served state's.
type checkState struct{ state.State }

// Create checks a Create of r.
func (c checkState) Create(ctx context.Context, r resource.Resource, _ ...state.CreateOption) error {
	md, err := c.valid(r)
	if err != nil {
		return err
	}
	_, err = c.State.Get(ctx, md, state.WithReadOnlyGet())
	switch {
	case err == nil:
		return state.NewConflictError(resource.PointerOf(md), "already exists")
	case !state.IsNotFoundError(err):
		return err
	}
	return errChecked
}

// Update checks an Update of r with opts.
func (c checkState) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	md, err := c.valid(r)
	if err != nil {
		return err
	}
	o := state.DefaultUpdateOptions()
	opt.Apply(&o, opts)
	cur, err := c.State.Get(ctx, md, state.WithReadOnlyGet())
	if err != nil {
		return err
	}
	if err := backend.CheckUpdate(md, cur.Metadata(), o); err != nil {
		return err
	}
	return errChecked
}

// valid returns r's metadata when the served state stores r's kind and r
// is a valid resource.
func (c checkState) valid(r resource.Resource) (*resource.Metadata, error) {
	md, err := state.ValidateResource(r)
	if err != nil {
		return nil, err
	}
	if err := state.ValidateType(c.State, resource.KindOf(md)); err != nil {
		return nil, err
	}
	return md, nil
}
