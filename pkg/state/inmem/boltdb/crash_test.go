package boltdb_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
	"github.com/resgraph/resgraph/pkg/state/routed"
)

// The crash test. A child process (this test binary, started again with
// childEnv set) opens a state on a file and writes to it at full speed
// from crashWriters goroutines — creates, updates, finalizers added and
// removed, teardowns, destroys — each goroutine on its own resources. On
// a pipe it reports each write before making it (the intent: the
// resource as it will be stored) and once the write returned (the
// acknowledgement). The test kills it with SIGKILL after a random number
// of acknowledgements (sometimes before it even opened the file), then
// opens the file itself and checks every resource against what the child
// reported: each resource is what its last acknowledged write left, or
// what its one write in flight would leave (each goroutine makes one write
// at a time); nothing acknowledged is lost, nothing decodes to anything
// else. It then starts a child again on the same file: its writes must
// continue the versions found.
//
// Under the interval policy (TestCrash_IntervalPolicyKeepsWrittenStates)
// a write returns before its commit, so acknowledged writes may be lost:
// there, each resource must be in one of the states it was written in
// since the last check (nothing corrupt, half-written or invented), and
// the versions must go on from what the file holds.
//
// The same test runs with the records encrypted and compressed
// (TestCrash_EncryptedWritesSurviveSIGKILL: every record must decrypt
// after every kill), during key rotations (TestCrash_RotationResumesAfterSIGKILL:
// each cycle puts a new key first and rotates while the writers write,
// and the kill often lands in the rotation; the file must open with the
// cycle's keys, and a rotation cut must resume and complete), and through
// a routed state that keeps the written kind in the file and another one
// in memory (TestCrash_RoutedWritesSurviveSIGKILL).
//
// SIGKILL kills the process, not the machine: what a process crash can do
// to the file is tested here (a write acknowledged before its commit, a
// half-made transaction); what a power loss can do rests on bbolt and the
// disk honoring fdatasync.

const (
	childEnv      = "RESGRAPH_BOLTDB_CRASH_CHILD"
	crashSeeds    = 24
	intervalSeeds = 8
	modeSeeds     = 8 // seeds of each of the encrypted, rotating and routed runs
	crashCycles   = 3
	crashWriters  = 4
	crashPerOwner = 6 // resources per writer goroutine
)

// TestCrash_AcknowledgedWritesSurviveSIGKILL is the crash test (see
// above): crashSeeds seeds of crashCycles kills each.
func TestCrash_AcknowledgedWritesSurviveSIGKILL(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	for seed := range uint64(crashSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			crashSeed(t, exe, seed, false, modePlain)
		})
	}
}

// TestCrash_EncryptedWritesSurviveSIGKILL is the crash test with every
// record encrypted and compressed (see above): after every kill, the
// file opens in strict mode (every record decrypts) with every
// acknowledged write, all under the key.
func TestCrash_EncryptedWritesSurviveSIGKILL(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	for seed := range uint64(modeSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			crashSeed(t, exe, 2000+seed, false, modeSealed)
		})
	}
}

// TestCrash_RotationResumesAfterSIGKILL is the crash test during key
// rotations (see above): after every kill every acknowledged write is
// there, every record decrypts with the cycle's keys, and a rotation the
// kill cut resumes when the file opens and completes.
func TestCrash_RotationResumesAfterSIGKILL(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	cut := 0
	for seed := range uint64(modeSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cut += crashSeed(t, exe, 3000+seed, false, modeRotating)
		})
	}
	t.Logf("%d kills cut a rotation", cut)
	assert.Positive(t, cut, "some kills must land in a rotation")
}

// TestCrash_RoutedWritesSurviveSIGKILL is the crash test through a routed
// state (see above).
func TestCrash_RoutedWritesSurviveSIGKILL(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	for seed := range uint64(modeSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			crashSeed(t, exe, 4000+seed, false, modeRouted)
		})
	}
}

// TestCrash_IntervalPolicyKeepsWrittenStates is the crash test under the
// interval policy (see above): intervalSeeds seeds.
func TestCrash_IntervalPolicyKeepsWrittenStates(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	for seed := range uint64(intervalSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			crashSeed(t, exe, 1000+seed, true, modePlain)
		})
	}
}

// written is the state of one resource as the child wrote it.
type written struct {
	exists  bool
	version uint64
	a       int
	phase   resource.Phase
	fins    string // sorted, comma-separated
	created int64  // Unix ns; 0 when unknown (a create not acknowledged)
}

func (w written) String() string {
	if !w.exists {
		return "absent"
	}
	return fmt.Sprintf("v%d a=%d %s fins=[%s] created=%d", w.version, w.a, w.phase, w.fins, w.created)
}

// model is what the test knows of each resource: the state its last
// acknowledged write left, and the write in flight.
type model struct {
	acked    map[string]written
	inflight map[string]*written
	// interval: the child writes under the interval policy; history
	// holds every state each resource was written in since the last
	// check (the checked one first).
	interval bool
	history  map[string][]written
	// mode is what the child writes through, cycle the run of the child
	// (its keys, in modeRotating); rotation is what the child reported of
	// its rotation (modeRotating).
	mode     crashMode
	cycle    int
	rotation rotationSeen
	// killR is the number of rotation batches after which the test kills
	// the child (modeRotating; 0: kill by acknowledgements).
	killR int
}

// rotationSeen is what a rotating child reported: batches committed, and
// whether the rotation completed.
type rotationSeen struct {
	batches int
	done    bool
}

// cut tells that the kill cut the rotation: a batch was committed (so
// the rotation had begun) and it did not complete.
func (r rotationSeen) cut() bool { return r.batches > 0 && !r.done }

// crashSeed runs crashCycles cycles of a child killed and its file
// verified, and returns how many kills cut a rotation.
func crashSeed(t *testing.T, exe string, seed uint64, interval bool, mode crashMode) int {
	t.Logf("seed %d, %s", seed, mode)
	rng := rand.New(rand.NewPCG(seed, 0xc0ffee))
	path := dbPath(t)
	m := &model{acked: map[string]written{}, inflight: map[string]*written{}, interval: interval, history: map[string][]written{}, mode: mode}
	cut := 0
	for cycle := range crashCycles {
		m.cycle, m.rotation, m.killR = cycle, rotationSeen{}, 0
		killAfter := rng.IntN(400) - 40 // < 0: kill at once, maybe mid-Open
		if mode == modeRotating && cycle > 0 {
			// Kill in the rotation, after some of its batches (or,
			// should it be done first, some writes after it).
			m.killR, killAfter = 1+rng.IntN(16), 1<<30
		}
		acks := runAndKill(t, exe, path, seed*100+uint64(cycle), killAfter, m)
		t.Logf("cycle %d: killed after %d acknowledged writes (target %d), rotation %+v", cycle, acks, killAfter, m.rotation)
		if m.rotation.cut() {
			cut++
		}
		m.verify(t, path)
	}
	return cut
}

// runAndKill runs a child on path, follows its reports into m, kills it
// with SIGKILL after killAfter acknowledgements and returns how many it
// had read.
func runAndKill(t *testing.T, exe, path string, seed uint64, killAfter int, m *model) int {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%t,%s,%d", childEnv, path, seed, m.interval, m.mode, m.cycle))
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the child
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	w.Close()
	killed := false
	kill := func() {
		if !killed {
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	if killAfter < 0 {
		kill()
	}
	acks, afterDone := 0, 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == "R":
			if m.rotation.batches++; m.killR > 0 && m.rotation.batches >= m.killR {
				kill()
			}
		case line == "RD":
			m.rotation.done = true
		case m.apply(t, line):
			if acks++; acks >= killAfter {
				kill()
			}
			if m.rotation.done {
				if afterDone++; afterDone >= 20 {
					kill()
				}
			}
		}
	}
	kill()
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child did not die of SIGKILL: %v\n%s", err, stderr.String())
	}
	return acks
}

// apply follows one report line of the child; it reports whether it was
// an acknowledgement. A line cut by the kill is ignored.
//
//	I id version a phase fins   intent: id is about to be stored so
//	D id                        intent: id is about to be destroyed
//	K id version created        the write of id in flight returned
func (m *model) apply(t *testing.T, line string) bool {
	f := strings.Split(line, " ")
	switch {
	case f[0] == "I" && len(f) == 6:
		ver, _ := strconv.ParseUint(f[2], 10, 64)
		a, _ := strconv.Atoi(f[3])
		ph, _ := strconv.Atoi(f[4])
		w := written{exists: true, version: ver, a: a, phase: resource.Phase(ph), fins: f[5]}
		cur := m.acked[f[1]]
		switch {
		case !cur.exists && ver != 1:
			t.Fatalf("%s: write of version %d, but the resource is absent", f[1], ver)
		case cur.exists && ver != cur.version+1:
			t.Fatalf("%s: write of version %d after %s: versions do not continue", f[1], ver, cur)
		}
		if cur.exists {
			w.created = cur.created
		}
		m.inflight[f[1]] = &w
		m.record(f[1], w)
	case f[0] == "D" && len(f) == 2:
		m.inflight[f[1]] = &written{}
		m.record(f[1], written{})
	case f[0] == "K" && len(f) == 4:
		w := m.inflight[f[1]]
		if w == nil {
			t.Fatalf("%s: acknowledged without an intent", f[1])
		}
		if w.exists {
			ver, _ := strconv.ParseUint(f[2], 10, 64)
			created, _ := strconv.ParseInt(f[3], 10, 64)
			if ver != w.version {
				t.Fatalf("%s: acknowledged version %d, intended %d", f[1], ver, w.version)
			}
			if w.created != 0 && w.created != created {
				t.Fatalf("%s: creation time changed from %d to %d", f[1], w.created, created)
			}
			w.created = created
		}
		m.acked[f[1]] = *w
		delete(m.inflight, f[1])
		return true
	}
	return false
}

// record adds a written state to the history of id.
func (m *model) record(id string, w written) {
	if m.interval {
		if _, ok := m.history[id]; !ok {
			m.history[id] = []written{m.acked[id]}
		}
		m.history[id] = append(m.history[id], w)
	}
}

// verify opens the file and checks every resource against the model,
// which then holds what the file holds.
func (m *model) verify(t *testing.T, path string) {
	ctx := testContext(t)
	st, err := boltdb.Open(path, registry(), crashOptions(m.mode, m.cycle)...)
	require.NoError(t, err, "the file opens after a kill (strict: every record decrypts)")
	defer func() { require.NoError(t, st.Close()) }()
	defer m.verifyKeys(t, st)
	l, err := st.List(ctx, testKind)
	require.NoError(t, err)
	found := map[string]written{}
	for _, r := range l.Items {
		found[r.Metadata().ID()] = asWritten(r.(*pair))
	}
	for id := range found {
		if _, ok := m.acked[id]; !ok && m.inflight[id] == nil {
			t.Fatalf("%s: in the file, but never written", id)
		}
	}
	ids := map[string]bool{}
	for id := range m.acked {
		ids[id] = true
	}
	for id := range m.inflight {
		ids[id] = true
	}
	lost := 0 // acknowledged writes the file lacks (interval policy)
	defer func() {
		if m.interval {
			t.Logf("the file lacks the last acknowledged write of %d of %d resources", lost, len(ids))
		}
	}()
	for id := range ids {
		got, acked := found[id], m.acked[id]
		if !same(got, acked) && (m.inflight[id] == nil || !same(got, *m.inflight[id])) {
			lost++
		}
		switch fl := m.inflight[id]; {
		case m.interval:
			states, ok := m.history[id]
			if !ok { // not written since the last check
				states = []written{acked}
			}
			if !slices.ContainsFunc(states, func(w written) bool { return same(got, w) }) {
				t.Fatalf("%s: the file holds %s, in which it was never written: %v", id, got, states)
			}
		case same(got, acked):
		case fl != nil && same(got, *fl):
		default:
			t.Fatalf("%s: the file holds %s; the last acknowledged write left %s, the one in flight %v", id, got, acked, fl)
		}
		m.acked[id] = got
	}
	clear(m.inflight)
	clear(m.history)
}

// verifyKeys checks that a routed child wrote nothing of its memory
// namespace to the file, and, for the modes that encrypt, that every record of the
// file is under one of the cycle's keys, and that a rotation the kill cut
// resumed and completed: every record is then under the first key.
func (m *model) verifyKeys(t *testing.T, st *boltdb.State) {
	if m.mode == modeRouted {
		l, err := st.List(testContext(t), resource.NewKind("scratch", testType))
		require.NoError(t, err)
		assert.Empty(t, l.Items, "what the routed state keeps in memory is not in the file")
	}
	if m.mode != modeSealed && m.mode != modeRotating {
		return
	}
	require.NoError(t, st.WaitRotation(testContext(t)), "the rotation resumes")
	byKey, err := st.RecordsByKey()
	require.NoError(t, err)
	keys := crashKeys(m.mode, m.cycle)
	for id := range byKey {
		assert.True(t, slices.ContainsFunc(keys, func(k atrest.Key) bool { return k.ID == id }), "a record under key %q", id)
	}
	if m.mode == modeSealed || m.rotation.cut() || m.rotation.done {
		for id := range byKey {
			assert.Equal(t, keys[0].ID, id, "every record under the first key (rotation %+v)", m.rotation)
		}
	}
}

// same reports whether the file's resource got is the written one w
// (whose creation time may be unknown).
func same(got, w written) bool {
	if w.created == 0 {
		got.created = 0
	}
	return got == w
}

func asWritten(r *pair) written {
	md := r.Metadata()
	return written{
		exists: true, version: md.Version().Value(), a: r.TypedSpec().A, phase: md.Phase(),
		fins: strings.Join(slices.Sorted(slices.Values(*md.Finalizers())), ","), created: md.Created().UnixNano(),
	}
}

// crashMode is what a crash test's child writes through.
type crashMode string

const (
	// modePlain: a state without a sealer.
	modePlain crashMode = "plain"
	// modeSealed: records encrypted with one key and compressed.
	modeSealed crashMode = "sealed"
	// modeRotating: cycle c puts key c first (keys 0..c kept) and
	// rotates, a record per transaction, while the writers write.
	modeRotating crashMode = "rotating"
	// modeRouted: the writers write through a routed state that keeps
	// their kind in the file and another namespace in memory.
	modeRouted crashMode = "routed"
)

// crashKeys are the keys of a cycle: key 0 in modeSealed, keys c..0 in
// modeRotating (the newest first), none otherwise. They are the same in
// the test and in its children.
func crashKeys(mode crashMode, cycle int) []atrest.Key {
	n := 0
	switch mode {
	case modeSealed:
		n = 1
	case modeRotating:
		n = cycle + 1
	}
	var keys []atrest.Key
	for i := n - 1; i >= 0; i-- {
		secret := sha256.Sum256(fmt.Appendf(nil, "crash test key %d", i))
		keys = append(keys, atrest.Key{ID: fmt.Sprintf("k%d", i), Secret: secret[:]})
	}
	return keys
}

// crashOptions are the options of a state of the mode's cycle, in the
// test and in its child.
func crashOptions(mode crashMode, cycle int) []boltdb.Option {
	keys := crashKeys(mode, cycle)
	if len(keys) == 0 {
		return nil
	}
	s, err := atrest.New(context.Background(), atrest.Config{Keys: atrest.StaticKeys(keys...), CompressAbove: 16})
	if err != nil {
		panic(err)
	}
	return []boltdb.Option{boltdb.WithSealer(s), boltdb.WithRotationBatch(1)}
}

// runChild is the crash test's writer (in the child process): it writes
// until it is killed, and returns only on an error. A rotating child
// rotates to its first key meanwhile, reporting each batch ("R") and the
// end ("RD").
func runChild(arg string) int {
	args := strings.Split(arg, ",")
	path := args[0]
	seed, _ := strconv.ParseUint(args[1], 10, 64)
	mode := crashMode(args[3])
	cycle, _ := strconv.Atoi(args[4])
	report := os.NewFile(3, "report")
	var mu sync.Mutex // one report line per write call
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(report, format+"\n", args...); err != nil {
			os.Exit(3)
		}
	}
	opts := append(crashOptions(mode, cycle), boltdb.WithRotationHook(func(int) { say("R") }))
	if args[2] == "true" {
		opts = append(opts, boltdb.WithInterval(time.Millisecond, 64))
	}
	file, err := boltdb.Open(path, registry(), opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 2
	}
	st, err := childState(file, mode)
	if err != nil {
		fmt.Fprintln(os.Stderr, "routed:", err)
		return 2
	}
	ctx := context.Background()
	l, err := st.List(ctx, testKind)
	if err != nil {
		fmt.Fprintln(os.Stderr, "list:", err)
		return 2
	}
	have := map[string]*pair{}
	for _, r := range l.Items {
		have[r.Metadata().ID()] = r.(*pair)
	}
	errc := make(chan error, crashWriters+2)
	for g := range crashWriters {
		own := map[string]*pair{}
		for j := range crashPerOwner {
			id := fmt.Sprintf("g%d-%d", g, j)
			own[id] = have[id]
		}
		rng := rand.New(rand.NewPCG(seed, uint64(g)))
		go func() { errc <- childWriter(ctx, st, rng, own, say) }()
	}
	go childSide(ctx, file, st, mode, cycle, say, errc)
	fmt.Fprintln(os.Stderr, "child: failed:", <-errc)
	return 1
}

// childState is what a child's writers write through: the file's state,
// or a routed state that keeps the written kind in it and every other
// namespace in memory.
func childState(file *boltdb.State, mode crashMode) (state.State, error) {
	if mode != modeRouted {
		return file, nil
	}
	return routed.New([]routed.Rule{routed.Exact(testNS, file)}, routed.WithDefault(inmem.NewState()))
}

// childSide is what a child does beside its writers: a rotating child
// rotates (from its second cycle), a routed one writes to memory too.
func childSide(ctx context.Context, file *boltdb.State, st state.State, mode crashMode, cycle int, say func(string, ...any), errc chan<- error) {
	switch {
	case mode == modeRotating && cycle > 0:
		// Nothing to rotate (no record yet) is done too.
		if err := file.Rotate(ctx); err != nil && !errors.Is(err, atrest.ErrNoNewKey) {
			errc <- fmt.Errorf("rotate: %w", err)
			return
		}
		say("RD")
	case mode == modeRouted:
		for i := 0; ; i++ {
			r := typed.New[pairSpec, pairDef](resource.NewMetadata("scratch", testType, fmt.Sprintf("s%d", i%8), resource.VersionUndefined), pairSpec{A: i})
			if err := st.Modify(ctx, r, func(resource.Resource) error { return nil }); err != nil {
				errc <- fmt.Errorf("scratch: %w", err)
				return
			}
		}
	}
}

// childWriter writes to its own resources forever, one write at a time.
func childWriter(ctx context.Context, st state.State, rng *rand.Rand, own map[string]*pair, say func(string, ...any)) error {
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range own {
			if !yield(id) {
				return
			}
		}
	})
	intent := func(r *pair, ver uint64) {
		md := r.Metadata()
		say("I %s %d %d %d %s", md.ID(), ver, r.TypedSpec().A, int(md.Phase()),
			strings.Join(slices.Sorted(slices.Values(*md.Finalizers())), ","))
	}
	ack := func(r *pair) {
		md := r.Metadata()
		say("K %s %d %d", md.ID(), md.Version().Value(), md.Created().UnixNano())
	}
	for {
		id := ids[rng.IntN(len(ids))]
		cur := own[id]
		if cur == nil {
			r := newPair(id, rng.IntN(1000))
			intent(r, 1)
			if err := st.Create(ctx, r); err != nil {
				return err
			}
			ack(r)
			own[id] = r
			continue
		}
		next := cur.DeepCopy().(*pair)
		md := next.Metadata()
		switch op := rng.IntN(10); {
		case op < 5: // update
			next.TypedSpec().A = rng.IntN(1000)
		case op < 7: // add a finalizer
			md.Finalizers().Add(fmt.Sprintf("f%d", rng.IntN(3)))
		case op < 8: // remove a finalizer
			if fins := *md.Finalizers(); len(fins) > 0 {
				md.Finalizers().Remove(fins[rng.IntN(len(fins))])
			}
		case op < 9: // tear down
			md.SetPhase(resource.PhaseTearingDown)
		default: // destroy (after removing the finalizers)
			if !md.Finalizers().Empty() {
				*md.Finalizers() = nil
				break
			}
			say("D %s", id)
			if err := st.Destroy(ctx, cur.Metadata()); err != nil {
				return err
			}
			say("K %s 0 0", id)
			own[id] = nil
			continue
		}
		intent(next, md.Version().Value()+1)
		if err := st.Update(ctx, next, state.WithExpectedPhaseAny()); err != nil {
			return err
		}
		ack(next)
		own[id] = next
	}
}
