package resource

import "slices"

// Finalizers is the list of finalizers of a resource. A resource that is
// tearing down is destroyed only once its finalizers are empty.
type Finalizers []Finalizer

// Add adds fin and reports whether it was absent.
func (f *Finalizers) Add(fin Finalizer) bool {
	if f.Has(fin) {
		return false
	}
	*f = append(*f, fin)
	return true
}

// Remove removes fin and reports whether it was present.
func (f *Finalizers) Remove(fin Finalizer) bool {
	i := slices.Index(*f, fin)
	if i < 0 {
		return false
	}
	*f = slices.Delete(*f, i, i+1)
	if len(*f) == 0 {
		*f = nil
	}
	return true
}

// Has reports whether fin is present.
func (f Finalizers) Has(fin Finalizer) bool { return slices.Contains(f, fin) }

// Empty reports whether there are no finalizers.
func (f Finalizers) Empty() bool { return len(f) == 0 }
