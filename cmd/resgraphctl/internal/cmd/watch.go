package cmd

import (
	"context"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/printer"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// watchBuffer is how many events the watch's channel holds; the remote
// client waits (and the daemon coalesces) when the printer is slower.
const watchBuffer = 64

// watch prints the resources of kind (the one id, if not empty) matching
// queries, then every change, until ctx is done (nil) or the watch ends
// (its error; errRestarted when the daemon cannot resume it).
func (a *app) watch(ctx context.Context, kind resource.Kind, def definition.Definition, id resource.ID, queries [][]resource.LabelQueryOption, p *printer.Printer) error {
	st, err := a.state()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := []state.WatchKindOption{state.WithBootstrapContents(true)}
	for _, q := range queries {
		opts = append(opts, state.WatchWithLabelQuery(q...))
	}
	if id != "" {
		opts = append(opts, state.WatchWithIDQuery(resource.IDRegexpMatch(exactly(id))))
	}
	ch := make(chan state.Event, watchBuffer)
	if err := st.WatchKind(ctx, kind, ch, opts...); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		reportConnection(ctx, a.conn, a.endpoint, a.stderr)
	}()
	defer func() { cancel(); <-done }()
	return printEvents(ctx, ch, p, def)
}

// printEvents prints the watch's events: the bootstrap's resources at
// once (as "existing"), then each change as it comes.
func printEvents(ctx context.Context, ch <-chan state.Event, p *printer.Printer, def definition.Definition) error {
	var boot []printer.Item
	bootstrapped := false
	for {
		var ev state.Event
		select {
		case <-ctx.Done():
			return nil
		case ev = <-ch:
		}
		switch ev.Type {
		case state.Created, state.Updated, state.Destroyed:
			if !bootstrapped {
				boot = append(boot, printer.Item{Event: "existing", Resource: ev.Resource})
				continue
			}
			if err := p.Print([]printer.Item{{Event: eventWord(ev.Type), Resource: ev.Resource}}, true); err != nil {
				return err
			}
		case state.Bootstrapped:
			bootstrapped = true
			if err := p.Print(boot, true); err != nil {
				return err
			}
			boot = nil
		case state.Errored:
			if remote.IsBookmarkUnknownError(ev.Error) {
				return errRestarted
			}
			return fmt.Errorf("the watch of %s ended: %w", def.Type, ev.Error)
		}
	}
}

func eventWord(t state.EventType) string {
	switch t {
	case state.Created:
		return "created"
	case state.Updated:
		return "updated"
	default:
		return "destroyed"
	}
}

// reportConnection tells on w when the connection to the daemon is lost
// and when it is back, until ctx is done.
func reportConnection(ctx context.Context, conn *grpc.ClientConn, endpoint string, w io.Writer) {
	s := conn.GetState()
	wasReady, lost := s == connectivity.Ready, false
	for conn.WaitForStateChange(ctx, s) {
		s = conn.GetState()
		switch {
		case s == connectivity.Ready:
			if lost {
				_, _ = fmt.Fprintf(w, "resgraphctl: connected to %s again; resuming the watch after the last change it printed\n", endpoint)
			}
			wasReady, lost = true, false
		case wasReady && !lost && s != connectivity.Shutdown:
			_, _ = fmt.Fprintf(w, "resgraphctl: lost the connection to %s; the watch resumes when the daemon is back (Ctrl-C stops)\n", endpoint)
			lost = true
		}
	}
}
