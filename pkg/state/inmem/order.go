package inmem

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
)

// idOrder is the order of a kind's IDs that List and bootstrap contents
// follow (rule S12a). It is built by sorting every ID the first time it
// is needed, and from then on kept up to date at the next List rather than
// sorted again: the IDs created since are sorted among themselves and
// merged in (appended, when they all come after the last one, as IDs
// created in order do), and those destroyed since are dropped. So a List
// after k creates costs k log k comparisons and one pass over the IDs,
// not n log n. A kind nobody lists keeps no order (it costs nothing per
// resource), nor one listed while it was empty (its next List sorts the
// IDs created since, as a merge would: a recorder's first listing of a
// daemon's empty state costs its writers nothing), nor one whose creates
// since its last List outnumber its IDs then. Guarded by the kind's mu.
type idOrder struct {
	// sorted are the IDs in order as of the last refresh; valid says it
	// is kept (false until the first List).
	sorted []resource.ID
	valid  bool
	// added are the IDs created since the last refresh, in the order of
	// their creation; gone counts the destroys since.
	added []resource.ID
	gone  int
}

// addedKeep is the capacity of added kept after a refresh: the storage
// of a larger burst of creates is let go.
const addedKeep = 1024

// created records the creation of id. Once the IDs created since the
// last refresh outnumber both addedKeep and the sorted ones, the order is
// let go (the next List sorts every ID, which then costs about what the
// merge would): a kind listed once and never again (a recorder's
// starting state) does not keep every ID created after it.
func (o *idOrder) created(id resource.ID) {
	if !o.valid {
		return
	}
	if len(o.added) >= max(addedKeep, len(o.sorted)) {
		*o = idOrder{}
		return
	}
	o.added = append(o.added, id)
}

// destroyed records a destroy.
func (o *idOrder) destroyed() {
	if o.valid {
		o.gone++
	}
}

// ids returns the keys of items in order, bringing the order up to date,
// and how many of them, from the start, are the IDs of the previous call
// at the same index (all of its IDs when those created since all come
// after them; 0 after a destroy, a create among them, or a first call).
func (o *idOrder) ids(items itemMap) (sorted []resource.ID, kept int) {
	if len(items) == 0 {
		*o = idOrder{} // nothing to keep in order: the next List sorts
		return nil, 0
	}
	if !o.valid {
		o.sorted = make([]resource.ID, 0, len(items))
		for id := range items {
			o.sorted = append(o.sorted, id)
		}
		slices.Sort(o.sorted)
		o.valid = true
		return o.sorted, 0
	}
	kept = len(o.sorted)
	if o.gone > 0 {
		// Only what is still stored stays (an ID destroyed and created
		// again since is stored, and also among added: merged once).
		n := len(o.sorted)
		o.sorted = slices.DeleteFunc(o.sorted, func(id resource.ID) bool {
			_, ok := items[id]
			return !ok
		})
		clear(o.sorted[len(o.sorted):n])
		o.gone = 0
		kept = 0
	}
	if len(o.added) > 0 && !o.merge(items) {
		kept = 0
	}
	return o.sorted, kept
}

// merge merges the IDs created since the last refresh that are still
// stored into sorted; appended reports that they all came after the IDs
// of sorted (or that there were none left).
func (o *idOrder) merge(items itemMap) (appended bool) {
	add := o.added
	slices.Sort(add)
	add = slices.Compact(add) // created, destroyed and created again
	add = slices.DeleteFunc(add, func(id resource.ID) bool {
		_, ok := items[id]
		return !ok
	})
	appended = true
	if n := len(o.sorted); n == 0 || len(add) > 0 && add[0] > o.sorted[n-1] {
		o.sorted = append(o.sorted, add...)
	} else if len(add) > 0 {
		appended = false
		merged := make([]resource.ID, 0, len(o.sorted)+len(add))
		i, j := 0, 0
		for i < len(o.sorted) && j < len(add) {
			switch a, b := o.sorted[i], add[j]; {
			case a < b:
				merged = append(merged, a)
				i++
			case b < a:
				merged = append(merged, b)
				j++
			default: // destroyed and created again since
				merged = append(merged, a)
				i++
				j++
			}
		}
		merged = append(merged, o.sorted[i:]...)
		o.sorted = append(merged, add[j:]...)
	}
	clear(o.added)
	if cap(o.added) > addedKeep {
		o.added = nil
	} else {
		o.added = o.added[:0]
	}
	return appended
}
