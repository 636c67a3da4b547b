package etcd

import "github.com/resgraph/resgraph/pkg/resource"

// pointerOnly is the resource a single-resource watch reports as Destroyed
// when the resource does not exist at the start (rule S8): metadata that
// carries only the pointer, and no spec.
type pointerOnly struct {
	md resource.Metadata
}

func newPointerOnly(ptr resource.Pointer) *pointerOnly {
	return &pointerOnly{md: resource.NewMetadata(ptr.Namespace(), ptr.Type(), ptr.ID(), resource.VersionUndefined)}
}

// Metadata implements [resource.Resource].
func (p *pointerOnly) Metadata() *resource.Metadata { return &p.md }

// Spec implements [resource.Resource]; there is none.
func (p *pointerOnly) Spec() any { return nil }

// DeepCopy implements [resource.Resource].
func (p *pointerOnly) DeepCopy() resource.Resource { return &pointerOnly{md: p.md.Copy()} }
