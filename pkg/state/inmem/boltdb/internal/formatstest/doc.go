// Package formatstest holds the bbolt state's tests of the spec formats
// daemons use: JSON with omitempty containers and protobuf field tags.
// It has no code of its own.
//
// It is a module of its own because the protobuf encoding is a module of
// its own (pkg/resource/codec/protobuf): were these tests in the boltdb
// module, the boltdb module would require the protobuf module, and every
// user of the bbolt state would need that module (a replace for a module
// only the tests use) to resolve its own build. A module's test-only
// dependencies on other modules of this repository live in a test module
// like this one; TestModules_NoTestOnlyRequirements in
// internal/repocheck checks it.
package formatstest
