package sim

import (
	"math/rand/v2"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
)

type verb uint8

const (
	verbSet verb = iota + 1
	verbRemove
	verbDo
)

// op is one step of a workload: set a resource, remove one, or run an
// action. A Set's resource is shared by every run of a Script: it is only
// ever copied.
type op struct {
	verb   verb
	fixed  resource.Resource
	ptr    resource.Pointer
	action string
	// at is when the op is due, since the run's start (a recorded op's
	// offset; 0: at once).
	at time.Duration
	// sensitive hides fixed's spec from transcripts (a recorded
	// sensitive kind).
	sensitive bool
	// after is, for a recorded op, how many controllers' commits the
	// recording has before it; pos how many commits (outside writers'
	// and controllers').
	after, pos int
}

func (o op) String() string {
	switch o.verb {
	case verbSet:
		if o.sensitive {
			return "set " + resource.String(o.fixed) + " <sensitive>"
		}
		return "set " + resource.String(o.fixed) + " " + specText(o.fixed)
	case verbRemove:
		return "remove " + resource.PointerString(o.ptr)
	default:
		return "do " + o.action
	}
}

type script []Op

func (s script) ops(uint64, []Action) []op {
	out := make([]op, len(s))
	for i, st := range s {
		out[i] = st.op
	}
	return out
}

type generated struct {
	n         int
	templates []Template
}

// ops draws the workload of seed: each step from the seed's generator, a
// set's resource from a generator of its own, seeded from the first.
func (g generated) ops(seed uint64, all []Action) []op {
	var actions []Action
	for _, a := range all {
		if !a.Named {
			actions = append(actions, a)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed0f10ad))
	total := 0
	for _, t := range g.templates {
		total += weight(t)
	}
	out := make([]op, 0, g.n)
	for range g.n {
		if len(actions) > 0 && (total == 0 || rng.IntN(10) == 0) {
			out = append(out, op{verb: verbDo, action: actions[rng.IntN(len(actions))].Name})
			continue
		}
		if total == 0 {
			break
		}
		t := pickTemplate(g.templates, rng.IntN(total))
		if len(t.IDs) == 0 || t.New == nil {
			continue
		}
		id := t.IDs[rng.IntN(len(t.IDs))]
		specRng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
		r := t.New(id, specRng)
		if !t.NoRemove && rng.IntN(10) < 3 {
			md := r.Metadata()
			out = append(out, op{verb: verbRemove, ptr: resource.NewPointer(md.Namespace(), md.Type(), md.ID())})
			continue
		}
		out = append(out, op{verb: verbSet, fixed: r})
	}
	return out
}

func weight(t Template) int {
	if t.Weight <= 0 {
		return 1
	}
	return t.Weight
}

func pickTemplate(ts []Template, n int) Template {
	for _, t := range ts {
		if n < weight(t) {
			return t
		}
		n -= weight(t)
	}
	return ts[len(ts)-1]
}

// specText renders a resource's spec for transcripts, cut to a readable length.
func specText(r resource.Resource) string {
	s := resource.SpecString(r)
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
