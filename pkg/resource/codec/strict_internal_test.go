package codec

import (
	"errors"
	"reflect"
	"testing"
)

// The field rules of shapes a registered JSON spec cannot have (the
// registry refuses them), which checkSpecFields still follows as
// encoding/json does, for a nested type that a registration trusts.

type laxBase struct {
	Zone     string
	Shadowed int
}

type laxA struct{ Twin int }
type laxB struct{ Twin int }

type laxC struct {
	Tagged int `json:"Both"`
}
type laxD struct{ Both int }

type lax struct {
	Skipped  int `json:"-"`
	hidden   int
	Anything any
	laxBase
	Shadowed string
	laxA
	laxB
	laxC
	laxD
}

var _ = lax{hidden: 0}

// TestCheckSpecFields_FollowsEncodingJSONsNames: a json:"-" field, an
// unexported field and a name two fields share at one depth name no key;
// an untagged embedded struct's fields are promoted (its own name is no
// key), a shallower field hides a deeper one, a tagged field beats an
// untagged one at one depth, and an interface takes any value.
func TestCheckSpecFields_FollowsEncodingJSONsNames(t *testing.T) {
	typ := reflect.TypeFor[lax]()
	for in, wantPath := range map[string]string{
		`{"Skipped": 1}`: "spec.Skipped",
		`{"hidden": 1}`:  "spec.hidden",
		`{"-": 1}`:       "spec.-",    // json:"-" names no key, "-" included
		`{"Twin": 1}`:    "spec.Twin", // two untagged at one depth: neither
		`{"Anything": {"x": 1}, "Zone": "z", "Shadowed": "s", "Both": 2}`: "",
		`{"laxBase": {}}`: "spec.laxBase",
	} {
		err := checkSpecFields(typ, []byte(in))
		var ufe *UnknownFieldError
		switch {
		case wantPath == "" && err != nil:
			t.Errorf("%s: %v", in, err)
		case wantPath != "" && (!errors.As(err, &ufe) || ufe.Path != wantPath):
			t.Errorf("%s: got %v, want an UnknownFieldError at %s", in, err, wantPath)
		}
	}
}
