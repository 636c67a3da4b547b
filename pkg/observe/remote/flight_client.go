package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"

	"github.com/resgraph/resgraph/pkg/observe/remote/internal/pb"
)

// RecordingSummary says what a recording a daemon sent holds, for a tool
// that does not know the daemon's types (package recording has the
// details).
type RecordingSummary struct {
	Source, Reason string
	// Start and End bound what it covers; Requested is the start asked
	// for when the recorder's window had let it go (zero otherwise).
	Start, End, Requested time.Time
	// Kinds, Initial and Changes count its kinds, the resources of its
	// starting state and its changes; Outside the changes of outside
	// writers and the world's events among them.
	Kinds, Initial, Changes, Outside int
	// Coalesced counts the changes its recorder did not see one by one.
	Coalesced uint64
	// Replay is the command that replays it ("FILE" for its file).
	Replay string
	// Size is the file's size in bytes.
	Size int64
}

// PlanResult is a daemon's plan of a change.
type PlanResult struct {
	// Text is the plan as plan.Plan.WriteText writes it.
	Text string
	// Converged is false when the daemon would not reach its fixed point
	// (Why says why: a hot loop, the commit bound, the time bound).
	Converged bool
	Why       string
	// Create, Update and Destroy count the resources the change would
	// create, update and destroy; WorldActions the world actions it would
	// take.
	Create, Update, Destroy, WorldActions int
}

// FlightClient asks a [Server] for recordings and plans (the Recorder and
// Planner services). Its errors are [*Error]s for what the server refused
// (rule OB2); a server that serves neither answers Unimplemented.
type FlightClient struct {
	rec pb.RecorderClient
	pl  pb.PlannerClient
}

// NewFlightClient returns a client of the server on conn.
func NewFlightClient(conn grpc.ClientConnInterface) *FlightClient {
	return &FlightClient{rec: pb.NewRecorderClient(conn), pl: pb.NewPlannerClient(conn)}
}

// ErrRecordingCut is returned by Record when the stream ended before the
// whole recording arrived: what was written to w is not a recording.
var ErrRecordingCut = errors.New("the daemon's recording was cut short (the stream ended before its end)")

// Record asks the daemon's flight recorder for a recording — its window
// now when d is 0, else everything from now for d (the call lasts d) —
// and writes the recording file's bytes to w (rule OB4). It returns the
// summary only once every byte arrived; otherwise an error, and what w
// holds is not a recording.
func (c *FlightClient) Record(ctx context.Context, d time.Duration, w io.Writer) (RecordingSummary, error) {
	stream, err := c.rec.Record(ctx, &pb.RecordRequest{ForNanos: int64(d)})
	if err != nil {
		return RecordingSummary{}, fromStatus(err)
	}
	var got uint64
	for {
		m, err := stream.Recv()
		if err == io.EOF {
			return RecordingSummary{}, ErrRecordingCut
		}
		if err != nil {
			return RecordingSummary{}, fromStatus(err)
		}
		if _, err := w.Write(m.GetData()); err != nil {
			return RecordingSummary{}, err
		}
		got += uint64(len(m.GetData()))
		if s := m.GetSummary(); s != nil {
			if s.GetSize() != got {
				return RecordingSummary{}, fmt.Errorf("%w: %d bytes of %d", ErrRecordingCut, got, s.GetSize())
			}
			return summary(s), nil
		}
	}
}

func summary(s *pb.RecordingSummary) RecordingSummary {
	out := RecordingSummary{
		Source: s.GetSource(), Reason: s.GetReason(), Start: time.Unix(0, s.GetStartUnixNano()), End: time.Unix(0, s.GetEndUnixNano()),
		Kinds: int(s.GetKinds()), Initial: int(s.GetInitial()), Changes: int(s.GetChanges()), Outside: int(s.GetOutside()),
		Coalesced: s.GetCoalesced(), Replay: s.GetReplay(), Size: int64(s.GetSize()),
	}
	if s.GetRequestedUnixNano() != 0 {
		out.Requested = time.Unix(0, s.GetRequestedUnixNano())
	}
	return out
}

// Plan asks the daemon for the plan of a change file (YAML or JSON, see
// plan.ParseChange); name names it in messages (rule OB5). The daemon
// writes nothing. A change it refuses (unknown types, a controller's
// output, a file that does not parse) is an error of the invalid class.
func (c *FlightClient) Plan(ctx context.Context, name string, change []byte) (PlanResult, error) {
	m, err := c.pl.Plan(ctx, &pb.PlanRequest{Change: change, Name: name})
	if err != nil {
		return PlanResult{}, fromStatus(err)
	}
	return PlanResult{
		Text: m.GetText(), Converged: m.GetConverged(), Why: m.GetWhy(),
		Create: int(m.GetCreate()), Update: int(m.GetUpdate()), Destroy: int(m.GetDestroy()), WorldActions: int(m.GetWorldActions()),
	}, nil
}
