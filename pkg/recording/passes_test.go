package recording_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// evenEcho reads the Note "x" and lists its Echoes on every pass, and
// echoes the note's N only when it is even: a pass woken by an odd N
// commits nothing.
type evenEcho struct{}

func (evenEcho) Name() string { return "evenecho" }
func (evenEcho) Inputs() []controller.Input {
	return []controller.Input{{Namespace: ns, Type: noteKind.Type(), Kind: controller.InputWeak}}
}
func (evenEcho) Outputs() []controller.Output {
	return []controller.Output{{Type: echoKind.Type()}}
}
func (evenEcho) Run(ctx context.Context, rt controller.Runtime, _ *zap.Logger) error {
	return echoNotes(ctx, rt, func(n int) bool { return n%2 == 0 })
}

// echoNotes is the run of a controller that, on every pass, reads the
// Note "x" and lists its Echoes, then echoes the note's N when echo(N)
// says so.
func echoNotes(ctx context.Context, rt controller.Runtime, echo func(n int) bool) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-rt.EventCh():
		}
		note, err := readNoteAndEchoes(ctx, rt)
		if err != nil {
			return err
		}
		if note == nil {
			continue
		}
		if n := note.TypedSpec().N; echo(n) {
			if err := safe.WriterModify(ctx, rt, typed.NewDefault[NoteSpec, EchoDef]("x", NoteSpec{}), func(e *Echo) error { e.TypedSpec().N = n; return nil }); err != nil {
				return err
			}
		}
	}
}

// readNoteAndEchoes reads the Note "x" and lists the Echoes: the note,
// nil when there is none.
func readNoteAndEchoes(ctx context.Context, rt controller.Runtime) (*Note, error) {
	note, err := safe.ReaderGet[*Note](ctx, rt, resource.NewPointer(ns, noteKind.Type(), "x"))
	if state.IsNotFoundError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	_, err = rt.List(ctx, echoKind)
	return note, err
}

// TestRC13_EveryPassIsLoggedWithWhatItsReadsSaw: a recorder of a Runtime
// logs every pass of its controllers, those that commit nothing
// included: for each update of the note, a pass of evenecho whose first
// read saw the note at that update's revision, a second read of the
// Echoes' kind (another kind: listed too), and one commit when the note's
// N was even, none when it was odd (it ended once its two reads are
// logged: it writes only after them). The controller's first pass began
// before the recorder tapped the Runtime (it waits in EventCh): it is
// logged too.
func TestRC13_EveryPassIsLoggedWithWhatItsReadsSaw(t *testing.T) {
	st := inmem.NewState()
	rt, ctx := runController(t, st, evenEcho{})
	rec, err := recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	started(t, rec)
	require.NoError(t, st.Create(ctx, newNote("x", 1)))
	var r *recording.Recording
	for n := 1; n <= 4; n++ {
		if n > 1 {
			_, err = st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "x"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = n; return nil })
			require.NoError(t, err)
		}
		rev := lastNoteRevision(t, rec)
		eventually(t, "a pass read the note's update and ended", func() bool {
			r, err = rec.Take()
			require.NoError(t, err)
			p := passOf(r, rev)
			return p != nil && len(p.Reads) == 2 && (n%2 == 1 || p.Commits == 1)
		})
		p := passOf(r, rev)
		assert.Equal(t, n%2, 1-p.Commits, "the pass that read N=%d made %d commits", n, p.Commits)
		assert.Equal(t, recording.PassRead{Index: 0, Revision: rev, Kind: resource.KindOf(noteKind)}, p.Reads[0])
		assert.Equal(t, uint32(1), p.Reads[1].Index)
		assert.Equal(t, resource.KindOf(echoKind), p.Reads[1].Kind)
		assert.GreaterOrEqual(t, p.Reads[1].Revision, rev)
		assert.Equal(t, "evenecho", p.Controller)
		assert.Zero(t, p.Item)
	}
}

// lastNoteRevision returns the revision of the newest outside change of
// the note a recorder recorded, once it recorded one.
func lastNoteRevision(t *testing.T, rec *recording.Recorder) uint64 {
	t.Helper()
	require.NoError(t, rec.Sync(context.Background()))
	r, err := rec.Take()
	require.NoError(t, err)
	var rev uint64
	for _, c := range r.Changes {
		if c.By == recording.ByOutside && c.Pointer.Type() == noteKind.Type() {
			rev = c.Revision
		}
	}
	require.NotZero(t, rev)
	return rev
}

// passOf returns the pass of a recording whose first read saw revision
// rev, nil when it has none.
func passOf(r *recording.Recording, rev uint64) *recording.Pass {
	for i, p := range r.Passes {
		if p.Reads[0].Revision == rev {
			return &r.Passes[i]
		}
	}
	return nil
}

// heldEcho echoes the Note "x" as evenEcho reads it; the first pass that
// finds the note then says so on read and waits for release before it
// echoes the note's N.
type heldEcho struct {
	evenEcho
	read, release chan struct{}
}

func (heldEcho) Name() string { return "heldecho" }
func (h heldEcho) Run(ctx context.Context, rt controller.Runtime, _ *zap.Logger) error {
	held := false
	return echoNotes(ctx, rt, func(int) bool {
		if !held {
			held = true
			close(h.read)
			select {
			case <-h.release:
			case <-ctx.Done():
				return false
			}
		}
		return true
	})
}

// TestRC13_APassThatReadBeforeTheWindowAndCommittedInItIsLogged: a pass
// whose reads all saw states before the window's start (the window let
// go of them) and that committed inside the window is one of the
// recording's passes, with its commit counted: the commit's Change is
// not left without its pass.
func TestRC13_APassThatReadBeforeTheWindowAndCommittedInItIsLogged(t *testing.T) {
	st := inmem.NewState()
	h := heldEcho{read: make(chan struct{}), release: make(chan struct{})}
	rt, ctx := runController(t, st, h)
	rec, err := recording.New(st, registry(t), recording.WithRuntime(rt), recording.WithWindow(time.Hour, 4<<10))
	require.NoError(t, err)
	started(t, rec)
	require.NoError(t, st.Create(ctx, newNote("x", 7)))
	<-h.read
	read := lastNoteRevision(t, rec)
	require.NoError(t, st.Create(ctx, newNote("y", 0)))
	var r *recording.Recording
	for i := 1; r == nil || r.Revision <= read; i++ {
		_, err := st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "y"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = i; return nil })
		require.NoError(t, err)
		require.NoError(t, rec.Sync(ctx))
		r, err = rec.Take()
		require.NoError(t, err)
		require.Less(t, i, 10_000, "the window never let go of the pass's reads")
	}
	close(h.release)
	eventually(t, "the held pass's commit is recorded", func() bool {
		require.NoError(t, rec.Sync(ctx))
		r, err = rec.Take()
		require.NoError(t, err)
		return slices.ContainsFunc(r.Changes, func(c recording.Change) bool { return c.By == recording.ByController && c.Read == read })
	})
	p := passOf(r, read)
	require.NotNil(t, p, "the pass that read revision %d (before the window's start %d) and committed in the window", read, r.Revision)
	assert.Equal(t, "heldecho", p.Controller)
	assert.Equal(t, 1, p.Commits)
	assert.Less(t, p.Reads[len(p.Reads)-1].Revision, r.Revision)
}

// batchEcho reads the Note "x" on each pass and writes nothing; when take is set
// it takes its change log's batch at the start of each pass (an
// incremental controller: changelog.Source).
type batchEcho struct {
	evenEcho
	take bool
}

func (b batchEcho) Name() string               { return map[bool]string{true: "batchecho", false: "reader"}[b.take] }
func (batchEcho) Outputs() []controller.Output { return nil }
func (b batchEcho) Run(ctx context.Context, rt controller.Runtime, _ *zap.Logger) error {
	src := rt.(changelog.Source)
	var batch *changelog.Batch
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-rt.EventCh():
		}
		if b.take {
			batch = src.TakeChanges(batch)
		}
		if _, err := safe.ReaderGet[*Note](ctx, rt, resource.NewPointer(ns, noteKind.Type(), "x")); err != nil && !state.IsNotFoundError(err) {
			return err
		}
	}
}

// TestRC13_AnIncrementalPassIsLoggedWithItsBatch: a pass of a Controller
// that takes its changes from the Runtime's change log logs, besides its
// reads, the revision of the batch it took (Pass.Batch: the note's
// update it was woken by, or an older one, at or below what its reads
// saw); a pass that takes none (reader) or a full batch (after a re-list
// of the note's kind: it reads everything) logs none.
func TestRC13_AnIncrementalPassIsLoggedWithItsBatch(t *testing.T) {
	st := inmem.NewState()
	rt, ctx := runController(t, st, batchEcho{take: true}, batchEcho{})
	rec, err := recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	started(t, rec)
	require.NoError(t, st.Create(ctx, newNote("x", 1)))
	for n := 2; ; n++ {
		require.Less(t, n, 50, "no pass of batchecho took a batch that was not full")
		_, err = st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "x"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = n; return nil })
		require.NoError(t, err)
		rev := lastNoteRevision(t, rec)
		var ps []recording.Pass
		eventually(t, "both controllers read the note's update", func() bool {
			r, err := rec.Take()
			require.NoError(t, err)
			ps = passesOf(r, rev)
			return slices.ContainsFunc(ps, func(p recording.Pass) bool { return p.Controller == "reader" }) &&
				slices.ContainsFunc(ps, func(p recording.Pass) bool { return p.Controller == "batchecho" })
		})
		took := false
		for _, p := range ps {
			if p.Controller == "reader" {
				assert.Zero(t, p.Batch, "reader takes no batch")
				continue
			}
			require.LessOrEqual(t, p.Batch, rev, "the batch of the update that woke it, an older one, or a full one")
			took = took || p.Batch != 0
		}
		if took {
			return
		}
	}
}

// passesOf returns the passes of a recording whose first read saw
// revision rev.
func passesOf(r *recording.Recording, rev uint64) []recording.Pass {
	var out []recording.Pass
	for _, p := range r.Passes {
		if p.Reads[0].Revision == rev {
			out = append(out, p)
		}
	}
	return out
}
