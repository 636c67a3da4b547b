package etcd

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// kindString formats a kind that may be invalid for an error message.
func kindString(k resource.Kind) string {
	if state.CheckKind(k) != nil {
		return "<invalid kind>"
	}
	return resource.KindString(k)
}
