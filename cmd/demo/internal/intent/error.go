package intent

import (
	"strconv"
	"strings"
)

// Problem is one thing wrong with an intent file.
type Problem struct {
	// Field is the path of the offending field, such as
	// "links[0].addresses[1]"; empty for a JSON syntax error.
	Field string
	// Message says what is wrong.
	Message string
	// Line and Col locate the problem (1-based; Col counts characters).
	Line, Col int
}

// Error is the error of an invalid intent file. It lists every problem
// found, in file order.
type Error struct {
	File     string
	Problems []Problem
}

// Error formats one line per problem: "file:line:col: field: message".
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.File)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(p.Line))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(p.Col))
		b.WriteString(": ")
		if p.Field != "" {
			b.WriteString(p.Field)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// InvalidError marks Error as an invalid-input error: state.IsInvalidError
// reports true for it.
func (*Error) InvalidError() {}
