// Package work defines the QController work item: what the router queues
// for a QController and what its workers take from the queue.
package work

import "github.com/resgraph/resgraph/pkg/resource"

// Item is a QController work item: a pointer of a primary input to pass to
// Reconcile, or (Map) a pointer of a mapped input to pass to MapInput, whose
// results are queued as items in turn. It is a plain comparable value, so
// that queueing a change allocates nothing.
type Item struct {
	Ptr resource.PointerKey
	// Map is set for an item that calls MapInput.
	Map bool
}

// Reconcile returns the item that reconciles ptr.
func Reconcile(ptr resource.PointerKey) Item { return Item{Ptr: ptr} }

// Map returns the item that passes ptr to MapInput.
func Map(ptr resource.PointerKey) Item { return Item{Ptr: ptr, Map: true} }

// Op names the user method the item calls: "Reconcile" or "MapInput".
func (it Item) Op() string {
	if it.Map {
		return "MapInput"
	}
	return "Reconcile"
}

// What names the call the item makes, for statuses: "Reconcile T(ns/id)"
// or "MapInput T(ns/id)".
func (it Item) What() string { return it.Op() + " " + it.Ptr.String() }

// String formats the item for logs: "T(ns/id)", or "map T(ns/id)" for a
// MapInput item.
func (it Item) String() string {
	if it.Map {
		return "map " + it.Ptr.String()
	}
	return it.Ptr.String()
}

// Partner is the other item of the same pointer: the MapInput item of a
// Reconcile item and the reverse.
func (it Item) Partner() Item {
	it.Map = !it.Map
	return it
}
