// Package errclass tells the class of an error: the marker interfaces of
// the state's error classes (state.ErrNotFound, ...) and of the access
// layer's (access.ErrDenied) are checked through it.
package errclass

// Is reports whether err, or an error in its chain, is a T, with the
// semantics of errors.As (Unwrap() error and Unwrap() []error chains, As
// methods). It walks the chain itself because errors.As needs a pointer
// to a T, which escapes: one allocation per call, even for a nil error,
// on the path of every write of the generic controllers (figures in
// docs/performance.md, "The error-class predicates").
func Is[T any](err error) bool {
	for err != nil {
		if _, ok := err.(T); ok {
			return true
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			var target T
			if x.As(&target) {
				return true
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if Is[T](e) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
