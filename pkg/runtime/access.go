package runtime

import "github.com/resgraph/resgraph/pkg/controller"

// IsAccessDeniedError reports whether err is (or wraps) the error of an
// access the engine refused to a controller (rules C3–C5); it is
// [controller.IsAccessDeniedError], kept here for callers of this package.
func IsAccessDeniedError(err error) bool { return controller.IsAccessDeniedError(err) }
