package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/resgraph/resgraph/pkg/resource"
)

// sameResources is the default equivalence of final states: the same
// resources (by pointer), each with the same spec, owner, phase,
// finalizers (as a set, unless ordered), labels and annotations (as maps)
// — versions and times aside — after canonical (nil: the resource
// itself).
func sameResources(run, ref View, canonical func(resource.Resource) resource.Resource, ordered bool) error {
	var diffs []string
	canon := func(r resource.Resource) resource.Resource {
		if canonical == nil {
			return r
		}
		return canonical(r)
	}
	for _, a := range run.All() {
		b, ok := ref.Get(a.Metadata())
		if !ok {
			diffs = append(diffs, "extra "+describe(a))
			continue
		}
		if !equalIgnoringVersion(canon(a), canon(b), ordered) {
			diffs = append(diffs, fmt.Sprintf("%s instead of %s", describe(a), describe(b)))
		}
	}
	for _, b := range ref.All() {
		if _, ok := run.Get(b.Metadata()); !ok {
			diffs = append(diffs, "missing "+describe(b))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	const most = 6
	if len(diffs) > most {
		diffs = append(diffs[:most], fmt.Sprintf("and %d more differences", len(diffs)-most))
	}
	return fmt.Errorf("%s", strings.Join(diffs, "; "))
}

// equalIgnoringVersion compares two resources by R1, with b's version,
// and their finalizers as sets unless ordered (two controllers that add
// their finalizers to one resource in either order reach equivalent
// states). Labels and annotations are maps already.
func equalIgnoringVersion(a, b resource.Resource, ordered bool) bool {
	sameOrder := ordered || slices.Equal(*a.Metadata().Finalizers(), *b.Metadata().Finalizers())
	if a.Metadata().Version().Equal(b.Metadata().Version()) && sameOrder {
		return resource.Equal(a, b)
	}
	c := a.DeepCopy()
	c.Metadata().SetVersion(b.Metadata().Version())
	if !sameOrder {
		d := b.DeepCopy()
		slices.Sort(*c.Metadata().Finalizers())
		slices.Sort(*d.Metadata().Finalizers())
		b = d
	}
	return resource.Equal(c, b)
}

// describe names a resource with what the equivalence compares.
func describe(r resource.Resource) string {
	md := r.Metadata()
	s := fmt.Sprintf("%s owner=%q phase=%s", resource.PointerString(md), md.Owner(), md.Phase())
	if f := *md.Finalizers(); len(f) > 0 {
		s += fmt.Sprintf(" finalizers=%v", []resource.Finalizer(f))
	}
	if l := md.Labels().Raw(); len(l) > 0 {
		s += " labels=" + sortedMap(l)
	}
	return s + " spec=" + specText(r)
}
