package runtime

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/controller"
)

var _ controller.ErrorReporter = (*controllerAdapter)(nil)

// ReportError records err, a failure the controller handles by itself, as
// the controller's last error (controller.ErrorReporter). The error's text
// is rendered here, outside any engine lock; a panic in its Error method
// is recorded as such.
func (a *controllerAdapter) ReportError(err error) {
	if err == nil {
		return
	}
	a.runner.reportFailure(reportedText(err))
}

// reportedText is err's text; a typed-nil error or a panicking Error method
// is described instead.
func reportedText(err error) (text string) {
	if isNilValue(err) {
		return fmt.Sprintf("a typed-nil %T", err)
	}
	defer func() {
		if p := recover(); p != nil {
			text = fmt.Sprintf("an error of type %T whose Error method panicked: %v", err, p)
		}
	}()
	return err.Error()
}
