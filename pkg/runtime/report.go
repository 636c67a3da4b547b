package runtime

import (
	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/controller"
)

var _ controller.ErrorReporter = (*controllerAdapter)(nil)

// ReportError records err, a failure the controller handles by itself, as
// the controller's last error (controller.ErrorReporter). The error's text
// is rendered here, outside any engine lock, by usercode.ErrorText (a
// typed-nil error or a panicking Error method is described as such).
func (a *controllerAdapter) ReportError(err error) {
	if err == nil {
		return
	}
	a.runner.reportFailure(usercode.ErrorText(err))
}
