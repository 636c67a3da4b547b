// Package resource defines the resource model of resgraph: identity (namespace,
// type, ID), metadata (version, phase, owner, labels, annotations,
// finalizers, timestamps) and an opaque spec.
//
// A state never keeps a reference to a resource it was given: a write
// stores a deep copy (rule R2), so the caller may go on changing its own
// object. What a state hands out is one of two things (rule S7 of the
// state):
//   - a private copy, from Get and List, which the caller may change;
//   - a shared, read-only snapshot, from watch events and from Get and
//     List with state.WithReadOnlyGet/WithReadOnlyList, which every reader
//     of that version shares: never change it, not even a slice or map of
//     its spec.
//
// To change a snapshot, work on its DeepCopy (or use the state's Modify,
// which hands its function a private copy):
//
//	c := ev.Resource.DeepCopy()
//	c.Metadata().Labels().Set("seen", "yes")
//	err := st.Update(ctx, c)
//
// A snapshot is frozen ([Metadata.Freeze]): its metadata's owner,
// finalizers, labels and annotations are shared with the copies made of
// it until a copy changes them (copy on write), so a copy of a stored
// resource copies no map or slice, and reading a snapshot allocates
// nothing.
//
// Guarantees:
//   - R1: [Equal] compares metadata (identity, version, phase, owner, labels,
//     annotations, finalizers; never timestamps) and specs. A spec with an
//     Equal(any) bool method decides its own equality; any other spec is
//     compared with deep equality.
//   - R2: DeepCopy results share no mutable memory with the original.
//   - R3: namespaces, types and IDs are non-empty; [ValidatePointer] reports
//     an empty one.
//
// The rules cited here are stated in docs/resources-and-state.md in the repository.
package resource
