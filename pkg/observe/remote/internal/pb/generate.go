// Package pb is the generated code of the observer's protocol
// (observe.proto). Regenerate it with go generate; the pinned tools are
// protoc 3.21 (Debian's protobuf-compiler), protoc-gen-go v1.36.12 and
// protoc-gen-go-grpc v1.5.1 (see the module's README).
package pb

//go:generate ../../gen.sh
