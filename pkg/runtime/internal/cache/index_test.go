package cache

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

type itemSpec struct{ N int }

type itemDef struct{}

func (itemDef) Definition() typed.Definition {
	return typed.Definition{Type: "Items.test.resgraph.dev", DefaultNamespace: "test"}
}

type item = typed.Resource[itemSpec, itemDef]

var itemKind = resource.NewKind("test", "Items.test.resgraph.dev")

// newItem builds the snapshot of item id at version ver of generation gen,
// with labels g (one key, absent when empty) and h (comma-separated keys,
// duplicates allowed) and spec n.
func newItem(id string, gen int64, ver uint64, g, h string, n int) *item {
	v, err := resource.ParseVersion(strconv.FormatUint(ver, 10))
	if err != nil {
		panic(err)
	}
	r := typed.New[itemSpec, itemDef](resource.NewMetadata("test", itemKind.Type(), id, v), itemSpec{N: n})
	r.Metadata().SetCreated(time.Unix(0, gen))
	if g != "" {
		r.Metadata().Labels().Set("g", g)
	}
	if h != "" {
		r.Metadata().Labels().Set("h", h)
	}
	return r
}

// byLabels indexes an item under its label g and every value of its label h.
func byLabels(r resource.Resource) []string {
	l := r.Metadata().Labels()
	var keys []string
	if g, ok := l.Get("g"); ok {
		keys = append(keys, "g="+g)
	}
	if h, ok := l.Get("h"); ok {
		for v := range strings.SplitSeq(h, ",") {
			keys = append(keys, "h="+v)
		}
	}
	return keys
}

// byMod indexes an item under its spec N mod 3, and panics for N == 7.
func byMod(r resource.Resource) []string {
	n := r.(*item).TypedSpec().N
	if n == 7 {
		panic("seven")
	}
	return []string{strconv.Itoa(n % 3)}
}

// modelKeys is what index fn lists r under, per the model: its keys,
// deduplicated; none when fn panics.
func modelKeys(fn IndexFunc, r resource.Resource) (keys []string) {
	defer func() {
		if recover() != nil {
			keys = nil
		}
	}()
	return fn(r)
}

func newIndexedKind(t *testing.T) (*Kind, *panics) {
	t.Helper()
	c := NewSet([]resource.Kind{itemKind}).Get(resource.KindOf(itemKind))
	p := &panics{}
	c.AddIndex("labels", byLabels, p.add)
	c.AddIndex("mod", byMod, p.add)
	return c, p
}

// panics records the panics of index functions.
type panics struct {
	mu  sync.Mutex
	ids []string
}

func (p *panics) add(index string, id resource.ID, _ *usercode.Panic) {
	p.mu.Lock()
	p.ids = append(p.ids, index+"/"+id)
	p.mu.Unlock()
}

// truth is the state of one ID in the simulated state.
type truth struct {
	res *item // nil when absent
	gen int64
	ver uint64
}

// TestIndex_ExactUnderRandomChanges drives a cached kind with two indexes
// through random sequences (fixed seeds) of what a cache sees: the state's
// changes — creations, label and spec changes, destructions, re-creations
// — delivered by a watch that lags behind by a random number of events,
// and the Runtime's own writes and destructions (the overlay, before the
// watch delivers them). After every step, each index lists under each key
// exactly the resources a Get returns whose index function gives that key
// (the model: a full scan), in ID order, and nothing else; a concurrent
// reader lists by index all along (run it under -race).
func TestIndex_ExactUnderRandomChanges(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6, 7, 8} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			runIndexModel(t, seed, 2000)
		})
	}
}

func runIndexModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed*7919))
	c, _ := newIndexedKind(t)
	c.MarkReady()
	ids := make([]string, 12)
	for i := range ids {
		ids[i] = fmt.Sprintf("r%02d", i)
	}
	vals := []string{"", "a", "b", "c"}
	st := map[string]*truth{}
	for _, id := range ids {
		st[id] = &truth{}
	}
	var pending []state.Event // committed, not yet delivered by the watch
	var clock int64

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { concurrentReader(t, c, stop) })
	defer func() { close(stop); wg.Wait() }()

	for step := range steps {
		id := ids[rng.IntN(len(ids))]
		tr := st[id]
		switch op := rng.IntN(10); {
		case op < 5: // a write (create or update), by the Runtime or not
			g, h := vals[rng.IntN(len(vals))], strings.Join([]string{vals[rng.IntN(4)], vals[rng.IntN(4)]}, ",")
			h = strings.Trim(h, ",")
			old := tr.res
			if old == nil {
				clock++
				tr.gen, tr.ver = clock, 0
			}
			tr.ver++
			tr.res = newItem(id, tr.gen, tr.ver, g, h, rng.IntN(9))
			ev := state.Event{Type: state.Created, Resource: tr.res}
			if old != nil {
				ev.Type, ev.Old = state.Updated, old
			}
			pending = append(pending, ev)
			if rng.IntN(2) == 0 {
				c.PutWritten(tr.res)
			}
		case op < 7: // a destruction, by the Runtime or not
			if tr.res == nil {
				continue
			}
			pending = append(pending, state.Event{Type: state.Destroyed, Resource: tr.res})
			if rng.IntN(2) == 0 {
				c.PutDestroyed(tr.res.Metadata())
			}
			tr.res = nil
		default: // the watch delivers some events
			n := rng.IntN(len(pending) + 1)
			for _, ev := range pending[:n] {
				c.Apply(&ev, ev.Resource.Metadata())
			}
			pending = pending[n:]
		}
		checkIndexes(t, c, step)
		if t.Failed() {
			return
		}
	}
	for _, ev := range pending {
		c.Apply(&ev, ev.Resource.Metadata())
	}
	checkIndexes(t, c, steps)
	// Once the watch caught up, the cache holds exactly the state.
	for id, tr := range st {
		got, err := c.Get(resource.NewPointer("test", itemKind.Type(), id), []state.GetOption{state.WithReadOnlyGet()})
		if tr.res == nil {
			assert.True(t, state.IsNotFoundError(err), "%s: %v", id, err)
		} else if assert.NoError(t, err) {
			assert.Same(t, tr.res, got)
		}
	}
}

// checkIndexes compares every index with a full scan of what Get returns.
func checkIndexes(t *testing.T, c *Kind, step int) {
	t.Helper()
	all, err := c.List(state.WithReadOnlyList())
	require.NoError(t, err)
	for _, ix := range []struct {
		name string
		fn   IndexFunc
	}{{"labels", byLabels}, {"mod", byMod}} {
		want := map[string][]string{}
		for _, r := range all.Items {
			for _, k := range modelKeys(ix.fn, r) {
				if l := want[k]; len(l) == 0 || l[len(l)-1] != r.Metadata().ID() {
					want[k] = append(l, r.Metadata().ID())
				}
			}
		}
		keys := []string{"g=", "g=a", "g=b", "g=c", "h=a", "h=b", "h=c", "h=", "0", "1", "2", "x"}
		for _, k := range keys {
			l, err := c.ListByIndex(ix.name, k, state.WithReadOnlyList())
			require.NoError(t, err)
			var got []string
			for _, r := range l.Items {
				got = append(got, r.Metadata().ID())
			}
			if !assert.Equal(t, slices.Clip(want[k]), slices.Clip(got), "step %d: index %s key %q", step, ix.name, k) {
				return
			}
		}
		// No key outside the ones checked holds anything.
		c.mu.RLock()
		for k, set := range c.ix.byKey[c.indexOf(ix.name)] {
			assert.Contains(t, keys, k, "step %d: unexpected key", step)
			assert.NotEmpty(t, set, "step %d: empty key %q kept", step, k)
		}
		assert.LessOrEqual(t, len(c.ix.cur), len(all.Items), "step %d: cur keeps gone IDs", step)
		c.mu.RUnlock()
	}
}

// concurrentReader lists by index until stop, checking that each answer
// is sorted by ID and holds only resources with the key.
func concurrentReader(t *testing.T, c *Kind, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		l, err := c.ListByIndex("labels", "g=a", state.WithReadOnlyList())
		if err != nil {
			t.Error(err)
			return
		}
		for i, r := range l.Items {
			if g, _ := r.Metadata().Labels().Get("g"); g != "a" {
				t.Errorf("listed %s under g=a with g=%q", r.Metadata().ID(), g)
			}
			if i > 0 && l.Items[i-1].Metadata().ID() >= r.Metadata().ID() {
				t.Errorf("not sorted by ID")
			}
		}
	}
}

// TestIndex_ListByIndexOptionsAndCopies: a List by index applies the label
// and ID queries and hands out copies unless asked for read-only
// snapshots; an unknown index is an invalid-class error.
func TestIndex_ListByIndexOptionsAndCopies(t *testing.T) {
	c, _ := newIndexedKind(t)
	c.MarkReady()
	a := newItem("a", 1, 1, "x", "p", 1)
	b := newItem("b", 2, 1, "x", "q", 4)
	for _, r := range []*item{b, a} {
		c.Apply(&state.Event{Type: state.Created, Resource: r}, r.Metadata())
	}
	l, err := c.ListByIndex("labels", "g=x")
	require.NoError(t, err)
	require.Len(t, l.Items, 2)
	assert.Equal(t, "a", l.Items[0].Metadata().ID())
	assert.NotSame(t, a, l.Items[0], "a copy")
	assert.True(t, resource.Equal(a, l.Items[0]))

	l, err = c.ListByIndex("labels", "g=x", state.WithReadOnlyList(), state.WithLabelQuery(resource.LabelEqual("h", "q")))
	require.NoError(t, err)
	require.Len(t, l.Items, 1)
	assert.Same(t, b, l.Items[0])

	l, err = c.ListByIndex("mod", "1", state.WithIDQuery(resource.IDRegexpMatch(regexpOf(t, "^b$"))))
	require.NoError(t, err)
	require.Len(t, l.Items, 1)
	assert.Equal(t, "b", l.Items[0].Metadata().ID())

	_, err = c.ListByIndex("nope", "x")
	assert.True(t, state.IsInvalidError(err), "%v", err)
	_, err = (*Kind)(nil).ListByIndex("labels", "x")
	assert.True(t, state.IsInvalidError(err), "%v", err)
}

// TestIndex_PanickingIndexFunction: a panic of an index function lists the
// resource under no key of that index (the other indexes still list it)
// and is reported with the index and the resource.
func TestIndex_PanickingIndexFunction(t *testing.T) {
	c, p := newIndexedKind(t)
	c.MarkReady()
	r := newItem("s", 1, 1, "a", "", 7)
	c.Apply(&state.Event{Type: state.Created, Resource: r}, r.Metadata())
	for _, k := range []string{"0", "1", "2"} {
		l, err := c.ListByIndex("mod", k)
		require.NoError(t, err)
		assert.Empty(t, l.Items)
	}
	l, err := c.ListByIndex("labels", "g=a")
	require.NoError(t, err)
	assert.Len(t, l.Items, 1)
	assert.Equal(t, []string{"mod/s"}, p.ids)
}

// TestIndex_FilterByIndexMatchesTheIndex: before the cache is ready, a List
// by index filters the state's List with the index function: the same
// answer.
func TestIndex_FilterByIndexMatchesTheIndex(t *testing.T) {
	c, _ := newIndexedKind(t)
	l := resource.List{Items: []resource.Resource{
		newItem("a", 1, 1, "x", "y,y", 1), newItem("b", 1, 1, "z", "", 7), newItem("c", 1, 1, "", "x", 3),
	}}
	got, err := c.FilterByIndex(l, "labels", "h=y")
	require.NoError(t, err)
	require.Len(t, got.Items, 1)
	assert.Equal(t, "a", got.Items[0].Metadata().ID())
	_, err = c.FilterByIndex(l, "nope", "x")
	assert.True(t, state.IsInvalidError(err))
}

func regexpOf(t *testing.T, s string) *regexp.Regexp {
	t.Helper()
	re, err := regexp.Compile(s)
	require.NoError(t, err)
	return re
}
