package recording

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Recording is what a [Recorder] kept of a Runtime's state over a window
// of time: the starting state and every change after it, in order. Its
// resources are private copies: the caller may keep and change them.
type Recording struct {
	// Source names the daemon that recorded it (WithSource).
	Source string
	// Reason says why it was taken: "on demand", "hot loop: A writes X →
	// B writes Y → A", "failures: C has 5 failing items".
	Reason string
	// Taken is when it was taken; Start is the wall time of its starting
	// state, End the time of its last moment (the take).
	Taken, Start, End time.Time
	// Requested is the starting time a caller asked for (Recorder.Record):
	// zero when none was. A Start later than Requested means the
	// recorder's window had let go of the beginning asked for: the
	// recording starts later, from a consistent state (never a partial
	// one).
	Requested time.Time
	// Revision is the state's revision at the starting state (0 when the
	// state does not number its changes; over a routed state of several
	// backends, the highest of their revisions there: a change's Revision
	// is its backend's, comparable only with those of the same backend).
	Revision uint64
	// Coalesced counts the changes the recorder did not see one by one:
	// its watch fell behind and the state coalesced several changes of a
	// resource into one (rule S12). Zero means every change is in Changes.
	Coalesced uint64
	// Kinds are the kinds recorded, sorted, with their sensitivity.
	Kinds []Kind
	// Controllers are the names of the Runtime's controllers, sorted:
	// the owners whose writes are controllers' writes (rule RC2).
	Controllers []string
	// Replay is the command that replays it, as the daemon documents it
	// (WithReplayCommand; e.g. "go test ./cmd/demo/internal/scenario -run
	// TestReplay -sim.recording=FILE"); empty when unknown.
	Replay string
	// Initial is the starting state: every resource of every kind, sorted
	// by kind and ID.
	Initial []resource.Resource
	// Changes are the changes after the starting state, in the order the
	// state applied them (rule RC1).
	Changes []Change
	// Final is the state at End: every resource of every kind, sorted by
	// kind and ID (what a replay is compared with).
	Final []resource.Resource
	// Passes are the passes of the Runtime's controllers that read a
	// state of the recording or committed in it, those that committed
	// nothing included, with the revisions their reads saw
	// (rule RC13), ordered by their first read's revision (a
	// controller's in the order they ran): a replay holds each read
	// until its run is at the state it saw. Empty when the recorder did
	// not tap a Runtime's commits (or read a file of format version 3).
	Passes []Pass
}

// Pass is one pass of a controller (a Controller's, from one call of
// EventCh to the next, or the run of one QController item) that read a
// state of the recording or committed in it (rule RC13): a pass whose
// reads all came before the recording's start and whose commit is one of
// its Changes has reads older than Revision.
type Pass struct {
	Controller string
	// Item is the QController item of the run; zero for a Controller's
	// pass.
	Item resource.PointerKey
	// Reads are its reads that said their revision: the first, and each
	// later one whose revision or kind differs from the one before (a
	// read not listed saw the revision and kind of the last one listed
	// before it). At least one.
	Reads []PassRead
	// Commits is how many of its writes committed (0: its writes left
	// the state as it was).
	Commits int
	// Batch is, for a pass of a Controller that took its changes from
	// the Runtime's change log (an incremental pass, runtime.BatchTap),
	// the revision at or below which were the changes of the batch it
	// took, before its reads: it handled those changes, not those its
	// reads saw come after. Zero when it took none, or a full batch (it
	// read everything), or the file is of format version 4 or older.
	Batch uint64
}

// PassRead is a read of a pass: its number in the pass (from 0: every
// Get and List of the controller counts), the revision of the state it
// returned and the kind it read (it saw the kind's resources as they were
// at Revision; zero when the recording does not hold the kind).
type PassRead struct {
	Index    uint32
	Revision uint64
	Kind     resource.KindKey
}

// Kind is a recorded kind.
type Kind struct {
	Namespace resource.Namespace
	Type      resource.Type
	// Sensitive kinds' specs are kept only as the codec's bytes and never
	// printed (rule RC5).
	Sensitive bool
}

// By says who made a change.
type By uint8

// Who made a change.
const (
	// ByOutside: a writer that is not one of the Runtime's controllers (a
	// user, another process, the daemon's own code).
	ByOutside By = iota + 1
	// ByController: one of the Runtime's controllers (Change.Writer names
	// it, when the change says: a change of finalizers alone names the
	// holder of its finalizer only when that is a controller's name).
	ByController
	// ByWorld: an action of the world the daemon noted (Recorder.Act): a
	// cable unplugged, a device gone; or what the daemon's code read from
	// the world (Recorder.Observe, OpRead).
	ByWorld
)

var byNames = [...]string{ByOutside: "outside", ByController: "controller", ByWorld: "world"}

func (b By) String() string {
	if b >= ByOutside && int(b) < len(byNames) {
		return byNames[b]
	}
	return fmt.Sprintf("By(%d)", uint8(b))
}

// Op is what a change did.
type Op uint8

// What a change did.
const (
	// OpCreate: the resource was created.
	OpCreate Op = iota + 1
	// OpUpdate: its spec, labels, annotations, owner or finalizers changed.
	OpUpdate
	// OpTeardown: its phase became tearing down.
	OpTeardown
	// OpDestroy: it was destroyed (Change.Resource is its last state).
	OpDestroy
	// OpAction: a world action (ByWorld; Change.Action names it).
	OpAction
	// OpRead: the daemon's code read the world (ByWorld; Change.Action
	// names what it read, Change.Value holds what the world returned).
	OpRead
)

var opNames = [...]string{OpCreate: "create", OpUpdate: "update", OpTeardown: "teardown", OpDestroy: "destroy", OpAction: "action", OpRead: "read"}

func (o Op) String() string {
	if o >= OpCreate && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Change is one change of a recording.
type Change struct {
	// Offset is the change's time since the recording's Start.
	Offset time.Duration
	// Revision is the state's revision of the change (0 when the state
	// does not number its changes; for a world action, the revision the
	// state was at when it was noted).
	Revision uint64
	By       By
	Op       Op
	// Writer is the controller that made a ByController change (for a
	// change of finalizers alone, the holder of the finalizer added or
	// removed when it is named after a controller; "" otherwise).
	Writer string
	// Pointer and Version name the resource changed and its version after
	// the change (for OpDestroy, its last version); zero for OpAction.
	Pointer resource.PointerKey
	Version uint64
	// Read is, for a controller's change, the revision of the state that
	// the first read of the pass that made it returned (rule RC9): a
	// replay lets the pass run when its state is there. 0 when
	// unknown (the recorder did not tap a Runtime's commits, the pass
	// read nothing that said, or the pass log let it go).
	Read uint64
	// Resource is the resource after the change (for OpDestroy, its last
	// state), for an outside writer's change; nil for a controller's (its
	// Runtime makes it again in a replay) and for OpAction.
	Resource resource.Resource
	// Item is, for a QController's change, the item whose run made it
	// (a replay takes the items in that order); zero for a Controller's
	// change, any other change, and when the pass log let it go.
	Item resource.PointerKey
	// Action names a world action (OpAction), or what a world read read
	// (OpRead).
	Action string
	// Value is what a world read (OpRead) returned to the daemon's code,
	// in the daemon's own encoding (a replay's world fake returns it);
	// nil for any other change.
	Value []byte
	// Coalesced is set when the change stands for several that the
	// recorder did not see one by one (its watch fell behind, rule S12):
	// the resource went through versions between the previous change and
	// this one that the recording does not hold.
	Coalesced bool
}

// Outside returns the changes made by outside writers and the world
// actions, in order: what a replay applies as its workload.
func (rec *Recording) Outside() []Change {
	var out []Change
	for _, c := range rec.Changes {
		if c.By != ByController {
			out = append(out, c)
		}
	}
	return out
}

// Sensitive reports whether the kind of ptr is recorded as sensitive.
func (rec *Recording) Sensitive(k resource.Kind) bool {
	i := slices.IndexFunc(rec.Kinds, func(x Kind) bool { return x.Namespace == k.Namespace() && x.Type == k.Type() })
	return i >= 0 && rec.Kinds[i].Sensitive
}

// Duration is the time the recording covers.
func (rec *Recording) Duration() time.Duration { return rec.End.Sub(rec.Start) }

func sortResources(rs []resource.Resource) {
	slices.SortFunc(rs, func(a, b resource.Resource) int { return comparePointers(a.Metadata(), b.Metadata()) })
}

// comparePointers orders pointers by kind, then ID.
func comparePointers(a, b resource.Pointer) int {
	return cmp.Or(resource.KindOf(a).Compare(resource.KindOf(b)), cmp.Compare(a.ID(), b.ID()))
}
