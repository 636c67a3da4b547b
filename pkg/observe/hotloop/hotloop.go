// Package hotloop detects hot loops and flapping in a stream of trace
// records: a controller re-triggered mostly by its own writes, or
// controllers that keep rewriting each other's inputs, at a sustained rate.
//
// # What is flagged
//
// The detector reads [trace.Commit] records: controller C committed a
// version of resource R in a reconcile caused by a change (the record's
// Cause). Every write the Runtime makes for a controller carries the version
// it committed (a finalizer edit or a teardown that had nothing to do is a
// Noop, not a Commit); a commit without a version (a destroy over a state
// that could not tell which) is left out. The writer of that change is the Cause's Writer, or, when the
// Runtime left it empty, the controller whose earlier Commit of that
// version the detector saw. That gives trigger edges "W's change made C
// write R". Time is cut into windows of [Config.Window]. In a window, an
// edge W → C through R is hot when
//
//   - it made at least [Config.MinRate] × Window commits of R by C, and
//   - those are more than [Config.MinShare] of all of C's commits of R in
//     the window ("mostly": a resource C mostly writes for other reasons
//     is not a loop of W's making).
//
// The hot edges between controllers form a graph; each cycle in it — a
// self-edge (C's own change makes C write again) or a longer cycle (A
// writes X → B writes Y → A) — is a loop. A loop present in
// [Config.Sustain] consecutive windows is flagged ([Finding]); a flagged
// loop absent for [Config.ClearAfter] ends.
//
// Only writes count, and only those caused by a controller's change: a
// change from outside the Runtime (a user, an external source) starts no
// edge; a reconcile woken by a controller's own write that writes nothing
// (a controller that writes a status on its input, then sees its own
// write) adds none; a chain that does not close on itself (a burst
// through A → B → C) has no cycle, however fast; a controller that writes
// each resource once (a finalizer on each input) stays far below the
// rate.
//
// The detector counts the commits it is given. A Runtime feeds it every
// record of its trace: its reader of the trace is woken when half the
// ring was written since its last read, so a record is overwritten
// unread only when that reader cannot keep up with the writers; the
// records it missed are counted in the Runtime's Metrics (TraceMissed),
// never dropped silently, and the detector is told where they were
// ([Detector.Missed]).
//
// # Memory
//
// What the detector keeps is bounded whatever the number of resources
// committed: a resource committed once or twice in the last two windows
// is an entry of a bounded table (at most 16,384 entries of 44 bytes, no
// pointer), one committed more often a stat (at most 2,048 of them);
// names and kinds are kept once each. When the table is full, a commit
// takes the place of the entry committed longest ago; when the stats
// are, a resource committed again gets none. Either is counted
// ([Stats].Dropped).
//
// A window in which the detector was not fed every commit — records
// were missed, or it let go of a commit before its time — counts only
// part of its commits ([Stats].Incomplete): its trigger counts are lower
// bounds. A loop seen in it is seen (and flagged once sustained), but a
// loop absent from it is neither broken off (its streak of windows is
// kept) nor ended, and a flagged loop's rate is not lowered by it: an
// absence or a rate is only taken from a window that counted every
// commit. A Runtime reports its detector's Dropped and Incomplete counts
// in its Metrics (HotLoopDropped, HotLoopIncomplete).
//
// A Detector is not safe for concurrent use: one goroutine feeds it.
package hotloop

import (
	"hash/maphash"
	"math"
	"time"

	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// Defaults of [Config].
const (
	// DefaultWindow is the length of a counting window.
	DefaultWindow = 500 * time.Millisecond
	// DefaultMinRate is the trigger rate, per second, from which an edge
	// may be hot: 10 commits of one resource per second by one controller,
	// each caused by a change of the other's.
	DefaultMinRate = 10.0
	// DefaultMinShare is the share of a controller's commits of a resource
	// that must be caused by one writer's changes for the edge to be hot.
	DefaultMinShare = 0.75
	// DefaultSustain is the number of consecutive windows a loop must be
	// present in to be flagged: with the default window, a loop is flagged
	// after it ran for 1 s, within 1.5 s of its start.
	DefaultSustain = 2
	// DefaultClearAfter is how long a flagged loop must be absent to end.
	DefaultClearAfter = 5 * time.Second
)

// Config tunes a [Detector]. A zero field takes its default.
type Config struct {
	// Window is the length of a counting window (DefaultWindow).
	Window time.Duration
	// MinRate is the trigger rate per second from which an edge may be
	// hot (DefaultMinRate).
	MinRate float64
	// MinShare in (0, 1) is the share of a controller's commits of a
	// resource that must be caused by one writer's changes
	// (DefaultMinShare).
	MinShare float64
	// Sustain is the number of consecutive windows a loop must be present
	// in to be flagged (DefaultSustain).
	Sustain int
	// ClearAfter is how long a flagged loop must be absent to end
	// (DefaultClearAfter).
	ClearAfter time.Duration
}

// withDefaults returns c with its zero fields set to the defaults.
func (c Config) withDefaults() Config {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MinRate <= 0 {
		c.MinRate = DefaultMinRate
	}
	if c.MinShare <= 0 || c.MinShare >= 1 {
		c.MinShare = DefaultMinShare
	}
	if c.Sustain <= 0 {
		c.Sustain = DefaultSustain
	}
	if c.ClearAfter <= 0 {
		c.ClearAfter = DefaultClearAfter
	}
	return c
}

// threshold is the number of triggers in a window from which an edge may
// be hot (at least 1).
func (c Config) threshold() int {
	return max(int(c.MinRate*c.Window.Seconds()+0.5), 1)
}

// resKey identifies a resource: its kind (see Detector.kinds) and ID.
// A resource's stat (resStat) holds it: the kind's namespace and type are
// not repeated in each.
type resKey struct {
	kind uint32
	id   string
}

// kindName is a kind's namespace and type.
type kindName struct{ ns, typ string }

// lastKind is the kind a call site of keyOf looked up last, and its
// index: a pass commits outputs of one kind, caused by changes of one
// kind, so the next lookup is most often the same kind's (comparing two
// strings instead of hashing them).
type lastKind struct {
	kindName
	idx uint32
	set bool
}

// keyOf returns the key of the resource r, remembering its kind in last.
func (d *Detector) keyOf(r *trace.Ref, last *lastKind) resKey {
	if last.set && last.typ == r.Type && last.ns == r.Namespace {
		return resKey{kind: last.idx, id: r.ID}
	}
	k := kindName{r.Namespace, r.Type}
	i, ok := d.kindIndex(k)
	if !ok {
		i = uint32(len(d.kinds))
		d.kinds = append(d.kinds, k)
		d.kindIdx[k] = i
	}
	*last = lastKind{kindName: k, idx: i, set: true}
	return resKey{kind: i, id: r.ID}
}

// scanKinds is the number of kinds up to which kindIndex compares names
// rather than hashing them: a Runtime has few kinds.
const scanKinds = 8

// kindIndex returns the index of the kind k in d.kinds; false when it is
// not there.
func (d *Detector) kindIndex(k kindName) (uint32, bool) {
	if len(d.kinds) > scanKinds {
		i, ok := d.kindIdx[k]
		return i, ok
	}
	for i, c := range d.kinds {
		if c == k {
			return uint32(i), true
		}
	}
	return 0, false
}

// ref returns the resource k names.
func (d *Detector) ref(k resKey) trace.Ref {
	kn := d.kinds[k.kind]
	return trace.Ref{Namespace: kn.ns, Type: kn.typ, ID: k.id}
}

// lastName is the controller name a call site of nameOf looked up last,
// and its index (see lastKind: the commits of a pass are one
// controller's, caused by another's).
type lastName struct {
	name string
	idx  uint32
}

// nameOf returns the index of the controller name in d.names ("" is 0),
// remembering it in last.
func (d *Detector) nameOf(name string, last *lastName) uint32 {
	if name == "" {
		return 0
	}
	if last.idx != 0 && last.name == name {
		return last.idx
	}
	i, ok := d.nameIdx[name]
	if !ok {
		i = uint32(len(d.names))
		d.names = append(d.names, name)
		d.nameIdx[name] = i
	}
	*last = lastName{name: name, idx: i}
	return i
}

// recentCommits is how many committed versions of a resource the detector
// remembers to find the writer of a cause.
const recentCommits = 4

// resStat is what the detector knows of one resource: its last commits
// (to find the writer of a change that caused a reconcile) and, for the
// current window, its commits counted by writer and cause. Controllers
// are named by their index in Detector.names (0 is "", unknown), as in
// the table (see once): a stat holds no name of its own, and only its
// key's ID and its counts are pointers.
type resStat struct {
	key resKey
	// window is the index of the window counts belong to; lastSeen the
	// last window the resource was committed in.
	window, lastSeen uint64
	// recent are its last commits, recent[next] the oldest: the version
	// and the index of the controller that committed it.
	recent [recentCommits]struct {
		version uint64
		writer  uint32
	}
	next uint8
	// hot is set once a count of the window reached the threshold (the
	// resource is then in Detector.hot).
	hot    bool
	counts []count
	// own is the storage of counts while they fit: a resource committed
	// by up to two controllers, each because of one writer's changes
	// (four counts) — a chain's output, created by one controller and
	// given a finalizer by the next, then updated — needs no other.
	own [ownCounts]count
}

// ownCounts is how many counts a stat holds without an allocation.
const ownCounts = 4

// once is a commit of a resource, as the table of resources committed
// once or twice holds it (see twice): all the detector needs of it until
// the resource is committed again, since one commit reaches no trigger
// count above one. A burst of commits of many resources, each once (a
// chain of controllers), costs a table entry per resource instead of a
// resStat and its counts, and nothing the collector has to scan.
type once struct {
	// version is the version committed by reader, because of a change of
	// writer's (controller names, by their index in Detector.names; 0 is
	// "", unknown).
	version        uint64
	reader, writer uint16
	// stamp is the low 32 bits of the commit's sequence number (see
	// clock).
	stamp uint32
}

// twice is a resource committed once or twice in the last two windows,
// its commits in order (see once; the second's version is 0 while there
// is none): all the detector needs of it until it is committed a third
// time, while the threshold (Config.MinRate × Window) is above two, since
// two commits then reach no trigger count. A resource committed on its
// creation and again on an update costs a 44-byte table entry (see table)
// instead of a resStat (recent commits, counts: 192 bytes).
type twice [2]once

// hashKey is the key of a resource in Detector.res and Detector.table: a
// hash of its kind and ID, not the ID itself, computed once per commit
// for both. Two resources committed in the same two windows whose keys
// collide: in the table, they count as one (a commit of the one seen as
// the other's next); in res, whose stats hold
// the resource's own key, the commits of the second are not counted (and
// its version not found as a cause) while the first's stat is kept. With 64-bit keys the odds are
// about n²/2⁶⁵ for n resources (10⁻⁸ for 400,000), and a loop needs a
// trigger count of several commits (Config.MinRate × Window) in each of
// Config.Sustain windows to be flagged.
type hashKey uint64

// hashOf returns the key of the resource k in Detector.res and
// Detector.table, never 0 (the table's mark of no entry).
func (d *Detector) hashOf(k resKey) hashKey {
	h := hashKey(maphash.String(d.seed, k.id) ^ uint64(k.kind)*0x9e3779b97f4a7c15)
	if h == 0 {
		h = 1
	}
	return h
}

// count is a number of commits in the window: by reader, caused by a
// change of writer's (writer 0, "", counts every commit by reader); both
// are indexes in Detector.names.
type count struct {
	writer, reader uint32
	n              int32
}

// add counts one commit by reader caused by writer's change (indexes in
// Detector.names; writer 0: unknown), and reports whether a trigger count
// just reached threshold.
func (s *resStat) add(writer, reader uint32, threshold int) bool {
	reached := false
	for _, w := range [2]uint32{0, writer} {
		i := 0
		for i < len(s.counts) && (s.counts[i].writer != w || s.counts[i].reader != reader) {
			i++
		}
		if i == len(s.counts) {
			s.counts = append(s.counts, count{writer: w, reader: reader})
		}
		s.counts[i].n++
		if w != 0 && int(s.counts[i].n) == threshold {
			reached = true
		}
		if writer == 0 {
			break
		}
	}
	return reached
}

// total returns the commits of the resource by reader (an index in
// Detector.names) in the window.
func (s *resStat) total(reader uint32) int {
	for _, c := range s.counts {
		if c.writer == 0 && c.reader == reader {
			return int(c.n)
		}
	}
	return 0
}

// writerOf returns the index of the controller that committed version v,
// 0 ("") when not among the recent commits.
func (s *resStat) writerOf(v uint64) uint32 {
	for _, c := range s.recent {
		if c.version == v {
			return c.writer
		}
	}
	return 0
}

// Detector finds hot loops in the records it is fed; see the package doc.
type Detector struct {
	cfg       Config
	threshold int

	// windowEnd is the end of the current window; zero before the first
	// record. window is its index.
	windowEnd time.Time
	window    uint64
	// res are the resources committed in the last two windows more often
	// than the table keeps (at most maxStats); free the stats of resources
	// forgotten since, reused (a burst of commits of many resources
	// allocates once, not in every window), at most maxFree of them.
	// resPeak is the most resources res held since it was last rebuilt: a
	// map keeps the memory of its largest size, so res is rebuilt once it
	// holds less than a quarter of that.
	res     map[hashKey]*resStat
	resPeak int
	free    []*resStat
	// table holds the resources committed once or twice in the last two
	// windows (see table), none of them in res: twice only while the
	// threshold is above two.
	table table
	// clk orders the commits counted, for the table (see clock).
	clk clock
	// seed is the seed of the keys of res and table (see hashKey).
	seed maphash.Seed
	// kinds are the kinds of the resources seen, by the index their keys
	// hold (kindIdx); names the controller names of the table, by index
	// (nameIdx; names[0] is ""). Both are as many as the Runtime's kinds
	// and controllers.
	kinds   []kindName
	kindIdx map[kindName]uint32
	names   []string
	nameIdx map[string]uint32
	// The kinds Observe and the names onceOf looked up last (see
	// lastKind, lastName).
	lastRes, lastCause     lastKind
	lastReader, lastWriter lastName
	// hot are the resources of the window with a trigger count at the
	// threshold.
	hot []*resStat
	// gapped is set while the current window counts only part of its
	// commits (see Missed and Stats); gapOpen while the records missed
	// may run on into the next window (until the next record).
	gapped, gapOpen bool
	// stats are what Stats returns.
	stats Stats

	// streaks counts, per loop key, the consecutive windows the loop was
	// present in, with the loop as last seen.
	streaks map[string]*streak
	// active are the flagged loops by key.
	active map[string]*Finding
}

// streak is a loop seen in consecutive windows.
type streak struct {
	windows int
	loop    Finding
}

// New returns a detector with cfg (zero fields take their defaults).
func New(cfg Config) *Detector {
	cfg = cfg.withDefaults()
	return &Detector{
		cfg:       cfg,
		threshold: cfg.threshold(),
		window:    1,
		res:       map[hashKey]*resStat{},
		table:     newTable(minSlots),
		seed:      maphash.MakeSeed(),
		kindIdx:   map[kindName]uint32{},
		names:     []string{""},
		nameIdx:   map[string]uint32{},
		streaks:   map[string]*streak{},
		active:    map[string]*Finding{},
	}
}

// Config returns the detector's configuration, defaults applied.
func (d *Detector) Config() Config { return d.cfg }

// Stats are counts of what a detector could not count: they say how far
// its rates are lower bounds (see the package doc).
type Stats struct {
	// Missed is the number of records the detector was told it missed
	// (see [Detector.Missed]).
	Missed uint64
	// Dropped is the number of commits it let go of before their time:
	// earlier commits of a resource that lost its place in the full table
	// of resources committed once or twice, and commits of resources that
	// found the stats full.
	Dropped uint64
	// Incomplete is the number of windows closed that counted only part of
	// their commits (records missed, commits dropped).
	Incomplete uint64
}

// Stats returns the detector's counts of what it could not count.
func (d *Detector) Stats() Stats { return d.stats }

// Missed tells the detector that n records (n > 0) were not fed to it
// between the last record fed and the next (a reader of a ring that
// overwrote them first): the windows they may fall in, from the current
// one to that of the next record fed, count only part of their commits
// (see the package doc). n == 0 does nothing.
func (d *Detector) Missed(n uint64) {
	if n == 0 {
		return
	}
	d.stats.Missed += n
	d.gapped, d.gapOpen = true, true
}

// dropped counts a commit let go of before its time: the current window
// counts only part of its commits.
func (d *Detector) dropped() {
	d.stats.Dropped++
	d.gapped = true
}

// Observe feeds one record and returns the loops flagged or ended by the
// windows it closed (see [Detector.Tick]). Records must come in time order
// (as a ring holds them); a record older than the current window counts
// in it. Every record moves time on; only Commit records of a controller
// with a known version are counted.
func (d *Detector) Observe(ev *trace.Record) []Finding {
	var out []Finding
	if !ev.Time.IsZero() {
		out = d.Tick(ev.Time)
	}
	d.gapOpen = false // the records missed came before this one
	if ev.Type != trace.Commit || ev.Controller == "" || ev.Resource.Version == 0 {
		return out
	}
	writer := ev.Cause.Writer
	if writer == "" && ev.Cause.Version != 0 {
		writer = d.writerOf(d.keyOf(&ev.Cause, &d.lastCause), ev.Cause.Version)
	}
	key := d.keyOf(&ev.Resource, &d.lastRes)
	h := d.hashOf(key)
	d.clk.seq++
	var s *resStat
	if len(d.res) != 0 {
		s = d.res[h]
	}
	if s == nil {
		if s = d.statOf(ev, writer, key, h); s == nil {
			return out
		}
	} else if s.key != key {
		return out // another resource's hash (see hashKey)
	}
	if s.window != d.window {
		s.window, s.hot, s.counts = d.window, false, s.counts[:0]
	}
	s.lastSeen = d.window
	r, w := d.nameOf(ev.Controller, &d.lastReader), d.nameOf(writer, &d.lastWriter)
	s.recent[s.next].version, s.recent[s.next].writer = ev.Resource.Version, r
	s.next = (s.next + 1) % recentCommits
	if s.add(w, r, d.threshold) && !s.hot {
		s.hot = true
		d.hot = append(d.hot, s)
	}
	return out
}

// maxStats bounds the resources with a stat (see Detector.res).
const maxStats = 2048

// statOf returns the new stat of the resource key (hash h) that ev
// committed, caused by writer's change: nil when the commit is its first
// in the last two windows, or its second while the threshold is above
// two, which the table then holds (see twice), or when the stats are
// full (the commit is dropped); otherwise a stat in res, holding ev's
// earlier commits that the table held.
func (d *Detector) statOf(ev *trace.Record, writer string, key resKey, h hashKey) *resStat {
	i := d.table.find(h, &d.clk)
	n := 0
	if i >= 0 {
		n = 1
		if d.table.vals[i][1].version != 0 {
			n = 2
		}
	}
	if n < 2 && n+1 < d.threshold {
		if c, fits := d.onceOf(ev, writer); fits {
			if i >= 0 {
				d.table.again(i, c, d.window)
			} else if d.table.put(h, c, d.window, &d.clk) {
				d.dropped()
			}
			return nil
		}
	}
	if len(d.res) >= maxStats {
		d.dropped()
		return nil
	}
	s := d.newStat(key)
	d.res[h] = s
	if i >= 0 {
		t := d.table.vals[i]
		d.table.remove(i)
		d.adopt(s, t[0])
		if t[1].version != 0 {
			d.adopt(s, t[1])
		}
	}
	return s
}

// adopt makes the earlier commit o of s's resource s's own: among its
// recent commits, and counted if it is of the current window. The commits
// adopted are fewer than the threshold: none reaches it.
func (d *Detector) adopt(s *resStat, o once) {
	s.lastSeen = d.window - 1
	s.recent[s.next].version, s.recent[s.next].writer = o.version, uint32(o.reader)
	s.next++
	if d.clk.current(o) {
		s.lastSeen = d.window
		if s.window != d.window {
			s.window, s.counts = d.window, s.counts[:0]
		}
		s.add(uint32(o.writer), uint32(o.reader), d.threshold)
	}
}

// writerOf returns the controller that committed version v of the
// resource key, "" when not among its recent commits.
func (d *Detector) writerOf(key resKey, v uint64) string {
	h := d.hashOf(key)
	if len(d.res) != 0 {
		if c := d.res[h]; c != nil {
			if c.key != key {
				return ""
			}
			return d.names[c.writerOf(v)]
		}
	}
	if i := d.table.find(h, &d.clk); i >= 0 {
		for _, o := range d.table.vals[i] {
			if o.version == v {
				return d.names[o.reader]
			}
		}
	}
	return ""
}

// onceOf returns the record of ev's commit, caused by writer's change, as
// the table holds it; false when a controller's index does not fit in it
// (more than 65,535 controller names: the commit then gets a resStat).
func (d *Detector) onceOf(ev *trace.Record, writer string) (once, bool) {
	r, w := d.nameOf(ev.Controller, &d.lastReader), d.nameOf(writer, &d.lastWriter)
	if r > math.MaxUint16 || w > math.MaxUint16 {
		return once{}, false
	}
	return once{stamp: uint32(d.clk.seq), version: ev.Resource.Version, reader: uint16(r), writer: uint16(w)}, true
}

// newStat returns the zero stat of the resource key, reusing a free one.
func (d *Detector) newStat(key resKey) *resStat {
	n := len(d.free)
	if n == 0 {
		s := &resStat{key: key}
		s.counts = s.own[:0]
		return s
	}
	s := d.free[n-1]
	d.free[n-1] = nil
	d.free = d.free[:n-1]
	counts := s.counts[:0]
	*s = resStat{key: key, counts: counts}
	return s
}

// maxFree bounds the stats of forgotten resources kept for reuse.
const maxFree = 1024

// forget drops the resources not committed in the window closing nor in
// the one before (commits of the window before may still be the causes of
// the next window's), keeping at most maxFree of their stats for reuse,
// rebuilds res once it shrank to a quarter of its peak, and takes the
// table back to its starting size once all of it is stale: a burst of
// commits of many resources leaves no memory behind once it is over.
// The table's entries age by themselves (see table).
func (d *Detector) forget() {
	d.resPeak = max(d.resPeak, len(d.res))
	for k, s := range d.res {
		if s.lastSeen+1 < d.window {
			delete(d.res, k)
			if len(d.free) < maxFree {
				d.free = append(d.free, s)
			}
		}
	}
	if len(d.res) < d.resPeak/4 {
		d.res, d.resPeak = rebuilt(d.res), len(d.res)
	}
	d.table.shrink(d.window + 1)
}

// rebuilt returns a copy of m sized for what it holds.
func rebuilt[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Tick closes the windows that ended by now and returns the loops they
// flagged (Ended false) or ended (Ended true). The Runtime calls it when
// time passes without records, so that a loop that stopped ends.
func (d *Detector) Tick(now time.Time) []Finding {
	if d.windowEnd.IsZero() {
		d.windowEnd = now.Truncate(d.cfg.Window).Add(d.cfg.Window)
		return nil
	}
	var out []Finding
	for !now.Before(d.windowEnd) {
		out = append(out, d.closeWindow(d.windowEnd)...)
		d.windowEnd = d.windowEnd.Add(d.cfg.Window)
		if len(d.streaks) == 0 && len(d.active) == 0 && len(d.res) == 0 && d.table.stale(d.window) && !now.Before(d.windowEnd) {
			// Nothing left to age: the windows up to now are empty.
			d.windowEnd = now.Truncate(d.cfg.Window).Add(d.cfg.Window)
		}
	}
	return out
}

// Active returns the flagged loops, sorted by their key.
func (d *Detector) Active() []Finding {
	out := make([]Finding, 0, len(d.active))
	for _, f := range d.active {
		out = append(out, *f)
	}
	sortFindings(out)
	return out
}

// closeWindow evaluates the window that ends at end, resets the counts,
// and returns the loops flagged or ended. A window that counted only part
// of its commits breaks off no streak, ends no loop and lowers no rate.
func (d *Detector) closeWindow(end time.Time) []Finding {
	loops := d.loops(end)
	complete := !d.gapped
	if !complete {
		d.stats.Incomplete++
	}
	d.gapped = d.gapOpen
	clear(d.hot)
	d.hot = d.hot[:0]
	d.forget()
	d.window++
	d.clk.prev, d.clk.cur = d.clk.cur, d.clk.seq

	var out []Finding
	seen := make(map[string]bool, len(loops))
	for _, l := range loops {
		key := l.Key()
		seen[key] = true
		s := d.streaks[key]
		if s == nil {
			s = &streak{}
			d.streaks[key] = s
		}
		s.windows++
		s.loop = l
		if f := d.active[key]; f != nil {
			f.Last, f.Cycle = end, l.Cycle
			if complete || l.Rate > f.Rate {
				f.Rate = l.Rate
			}
			continue
		}
		if s.windows >= d.cfg.Sustain {
			f := l
			f.Since, f.Last = end, end
			d.active[key] = &f
			out = append(out, f)
		}
	}
	if complete {
		out = append(out, d.absent(end, seen)...)
	}
	sortFindings(out)
	return out
}

// absent breaks off the streaks of the loops not seen in the window that
// ends at end, and returns the flagged ones it ends: those absent for
// Config.ClearAfter.
func (d *Detector) absent(end time.Time, seen map[string]bool) []Finding {
	var out []Finding
	for key := range d.streaks {
		if !seen[key] {
			delete(d.streaks, key)
		}
	}
	for key, f := range d.active {
		if !seen[key] && end.Sub(f.Last) >= d.cfg.ClearAfter {
			delete(d.active, key)
			ended := *f
			ended.Ended = true
			out = append(out, ended)
		}
	}
	return out
}
