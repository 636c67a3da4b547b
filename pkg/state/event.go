package state

import (
	"strconv"

	"github.com/resgraph/resgraph/pkg/resource"
)

// EventType is the type of a watch [Event].
type EventType int

const (
	// Created: the resource appeared (or started matching the watch's
	// query, or is part of the bootstrap contents).
	Created EventType = iota
	// Updated: the resource changed; Old holds the state the watcher saw
	// before.
	Updated
	// Destroyed: the resource is gone (or stopped matching the watch's
	// query); Resource holds the last state the watcher saw.
	Destroyed
	// Bootstrapped: every existing resource was sent as Created.
	Bootstrapped
	// Errored: the watch failed; Error says why. No event follows.
	Errored
	// Noop: nothing happened. No state of resgraph sends it; a backend
	// may, and WrapCore's helpers and the Runtime's watches skip it.
	Noop
)

// String returns the event type's name.
func (t EventType) String() string {
	switch t {
	case Created:
		return "Created"
	case Updated:
		return "Updated"
	case Destroyed:
		return "Destroyed"
	case Bootstrapped:
		return "Bootstrapped"
	case Errored:
		return "Errored"
	case Noop:
		return "Noop"
	default:
		return "EventType(" + strconv.Itoa(int(t)) + ")"
	}
}

// Bookmark is an opaque position in a watch stream: a watch started from a
// bookmark resumes exactly after the event that carried it (rule S11).
type Bookmark []byte

// Event is a change delivered by a watch.
type Event struct {
	// Resource is the state after the change; for Destroyed, the last state.
	Resource resource.Resource
	// Old is the state before the change, for Updated (and Destroyed).
	Old resource.Resource
	// Error is set for Errored.
	Error error
	// Bookmark is where to resume after this event.
	Bookmark Bookmark
	// Revision is the revision of the state this event brings the watcher
	// to (see [RevisionReporter]): for a change, the change's revision
	// (for changes coalesced into one event, the newest one's); for the
	// bootstrap contents, the Bootstrapped event and a single-resource
	// watch's first event, the revision of the state they were read at.
	// Within one watch it never decreases. 0 when the state does not
	// number its changes.
	Revision uint64
	// Type is the kind of change.
	Type EventType
}
