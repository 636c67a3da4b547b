// Package resource defines the resource model of resgraph: identity (namespace,
// type, ID), metadata (version, phase, owner, labels, annotations,
// finalizers, timestamps) and an opaque spec.
//
// A [Resource] is a value the caller owns: the state never keeps a reference
// to a resource it was given nor hands out one it keeps, so every resource
// read from a state may be mutated freely (see rule S7 of the state).
//
// Guarantees:
//   - R1: [Equal] compares metadata (identity, version, phase, owner, labels,
//     annotations, finalizers; never timestamps) and specs. A spec with an
//     Equal(any) bool method decides its own equality; any other spec is
//     compared with deep equality.
//   - R2: DeepCopy results share no mutable memory with the original.
//   - R3: namespaces, types and IDs are non-empty; [ValidatePointer] reports
//     an empty one.
package resource
