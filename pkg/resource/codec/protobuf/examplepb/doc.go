// Package examplepb holds generated protobuf messages used as resource
// specs by the tests of package protobuf and of the bbolt state: a spec
// that is a generated message needs no hand-written code. VTLinkSpec also
// has vtprotobuf-shaped CloneVT and EqualVT methods (vt.go).
//
// The Go code is generated from specs.proto and strict.proto by gen.sh,
// with the pinned protoc 3.21 and protoc-gen-go v1.36.12, and committed.
//
//go:generate ./gen.sh
package examplepb
