package resource

import (
	"fmt"
	"reflect"
)

// SpecRedacter is implemented by a spec that holds secrets (keys, tokens,
// passwords), on its value or its pointer: RedactSpec returns what may be
// printed in the spec's place — a copy with the secrets masked, or a
// summary. It must not change the spec. Every place resgraph prints a
// spec prints [PrintableSpec] of it: the test kit's failure reports
// (runtimetest), the demo's log lines; the in-memory state's mutation
// detector names the changed part of such a spec but not its values; the
// Runtime's logs, trace records, explanations and debug pages print
// identities and metadata, never a spec.
type SpecRedacter interface {
	RedactSpec() any
}

var redacterType = reflect.TypeFor[SpecRedacter]()

// PrintableSpec returns what may be printed for spec: the result of its
// RedactSpec when spec, or a pointer to it, implements [SpecRedacter];
// spec itself otherwise. A RedactSpec that panics yields a placeholder
// that says so, never the spec.
func PrintableSpec(spec any) (out any) {
	if spec == nil {
		return nil
	}
	r, ok := spec.(SpecRedacter)
	if !ok {
		t := reflect.TypeOf(spec)
		if t.Kind() == reflect.Pointer || !reflect.PointerTo(t).Implements(redacterType) {
			return spec
		}
		p := reflect.New(t)
		p.Elem().Set(reflect.ValueOf(spec))
		r = p.Interface().(SpecRedacter)
	}
	defer func() {
		if p := recover(); p != nil {
			out = fmt.Sprintf("<redacted: RedactSpec panicked: %v>", p)
		}
	}()
	return r.RedactSpec()
}

// SpecString formats r's spec for a log line or a report (%+v of its
// [PrintableSpec]).
func SpecString(r Resource) string {
	if r == nil {
		return "<nil resource>"
	}
	return fmt.Sprintf("%+v", PrintableSpec(r.Spec()))
}
