package examplepb

import (
	"slices"
	"sync/atomic"
)

// VTCalls counts the calls of the vtprotobuf-shaped methods below, so
// that the tests see that they are used.
var VTCalls struct{ Clone, Equal atomic.Int64 }

// CloneVT returns a deep copy of m, as vtprotobuf's generated CloneVT
// does (this file stands in for its generator, which is not installed
// here).
func (m *VTLinkSpec) CloneVT() *VTLinkSpec {
	VTCalls.Clone.Add(1)
	if m == nil {
		return nil
	}
	return &VTLinkSpec{Name: m.Name, Aliases: slices.Clone(m.Aliases)}
}

// EqualVT reports whether m and that hold the same fields, as
// vtprotobuf's generated EqualVT does (nil equals an empty message).
func (m *VTLinkSpec) EqualVT(that *VTLinkSpec) bool {
	VTCalls.Equal.Add(1)
	if m == that {
		return true
	}
	return m.GetName() == that.GetName() && slices.Equal(m.GetAliases(), that.GetAliases())
}
