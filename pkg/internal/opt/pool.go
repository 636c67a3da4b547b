package opt

import "sync"

// Pool lends the options value that [ApplyPooled] applies options to. An
// option receives a pointer, which makes the value it points to escape
// to the heap: applying options to a fresh value allocates on every call,
// applying them to a pooled one does not. The zero Pool is ready to use.
type Pool[O any] struct{ p sync.Pool }

// ApplyPooled returns defaults with every non-nil option of opts applied,
// in order (defaults itself when there are none), without allocating: the
// options are applied to a value of p, cleared before it goes back (it
// keeps no pointer of the caller's). An option must not keep the pointer
// it receives beyond its call.
func ApplyPooled[O any, F ~func(*O)](p *Pool[O], defaults O, opts []F) O {
	if len(opts) == 0 { // inlined: a call without options makes no call
		return defaults
	}
	return applyPooled(p, defaults, opts)
}

// applyPooled is ApplyPooled with options.
func applyPooled[O any, F ~func(*O)](p *Pool[O], defaults O, opts []F) O {
	v, _ := p.p.Get().(*O)
	if v == nil {
		v = new(O)
	}
	*v = defaults
	Apply(v, opts)
	o := *v
	var zero O
	*v = zero
	p.p.Put(v)
	return o
}
