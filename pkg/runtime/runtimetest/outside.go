package runtimetest

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
)

// WithOutsideWriters declares the kinds the test writes itself (from
// outside the Runtime), as runtime.WithOutsideWriters does: a controller's
// input of such a kind that no registered controller outputs is not
// warned about, and the dependency graph marks it "outside writer".
func WithOutsideWriters(kinds ...resource.Kind) Option {
	return func(c *config) { c.rtOpts = append(c.rtOpts, runtime.WithOutsideWriters(kinds...)) }
}
