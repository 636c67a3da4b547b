package etcd

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ state.TypeValidator = (*core)(nil)

// ValidateType implements [state.TypeValidator]: the state stores the
// types its codec registry knows; any other is refused with the codec's
// error (of the invalid class), which names the type and how to register
// it.
func (c *core) ValidateType(kind resource.Kind) error {
	if err := c.reg.ValidateType(kind.Type()); err != nil {
		return fmt.Errorf("etcd state: %w", err)
	}
	return nil
}
