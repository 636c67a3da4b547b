// Package opt applies functional options the way every resgraph package
// does: a nil option is no option, and is skipped. (A nil required
// argument — a state, a pointer, a function — is an invalid-class error of
// the call instead; see the state package doc.)
package opt

// Apply calls every non-nil option of opts on o, in order.
func Apply[O any, F ~func(*O)](o *O, opts []F) {
	for _, f := range opts {
		if f != nil {
			f(o)
		}
	}
}
