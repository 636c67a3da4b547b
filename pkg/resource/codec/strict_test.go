package codec_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
)

// The spec shapes of the input-strictness tests.

type Hop struct {
	Gateway string `json:"gw"`
	Metric  int
}

type Base struct {
	Zone string
}

type strictSpec struct {
	MTU   int
	Name  string `json:"name,omitempty"`
	Opts  int    `json:",omitempty"`
	Dash  int    `json:"-,"`
	Hops  []Hop
	Peers map[string]Hop
	Free  map[string]int
	Next  *Hop
	Raw   json.RawMessage
	Own   ownText
	Base
}

// ownText decodes itself from JSON text.
type ownText struct{ v string }

func (o *ownText) UnmarshalText(b []byte) error { o.v = string(b); return nil }
func (o ownText) MarshalText() ([]byte, error)  { return []byte(o.v), nil }

// selfJSON is a spec that decodes itself: whatever keys it is given.
type selfJSON struct{ N int }

func (s *selfJSON) UnmarshalJSON(b []byte) error { s.N = len(b); return nil }

func strictRegistry(t *testing.T) *codec.Registry {
	t.Helper()
	reg := codec.NewRegistry()
	if err := codec.Register[strictSpec, def[strictSpec]](reg); err != nil {
		t.Fatal(err)
	}
	if err := codec.Register[selfJSON, def[selfJSON]](reg); err != nil {
		t.Fatal(err)
	}
	return reg
}

func strictMD[S any]() resource.Metadata {
	return resource.NewMetadata(testNS, typeName[S](), "x", resource.VersionUndefined)
}

// TestDecodeSpecInput_RefusesKeysTheTypeHasNot: a key the spec type has no
// field for, or one that matches a field only by case, is an
// *UnknownFieldError naming its path, the key and the struct type, at
// every depth; DecodeSpec, for stored bytes, drops the same keys.
func TestDecodeSpecInput_RefusesKeysTheTypeHasNot(t *testing.T) {
	reg := strictRegistry(t)
	for _, tc := range []struct{ in, path, typ, caseOf string }{
		{`{"MTU": 1, "Bogus": 3}`, "spec.Bogus", "codec_test.strictSpec", ""},
		{`{"Mtu": 1400}`, "spec.Mtu", "codec_test.strictSpec", "MTU"},
		{`{"Name": "x"}`, "spec.Name", "codec_test.strictSpec", "name"},
		{`{"Hops": [{"gw": "a"}, {"gw": "b", "Bogus": 1}]}`, "spec.Hops[1].Bogus", "codec_test.Hop", ""},
		{`{"Hops": [{"Gateway": "a"}]}`, "spec.Hops[0].Gateway", "codec_test.Hop", ""},
		{`{"Peers": {"p": {"metric": 1}}}`, `spec.Peers["p"].metric`, "codec_test.Hop", "Metric"},
		{`{"Next": {"Nope": 1}}`, "spec.Next.Nope", "codec_test.Hop", ""},
		{`{"Base": {"Zone": "a"}}`, "spec.Base", "codec_test.strictSpec", ""},
		{`{"zone": "a"}`, "spec.zone", "codec_test.strictSpec", "Zone"},
	} {
		_, err := reg.DecodeSpecInput(strictMD[strictSpec](), codec.FormatJSON, []byte(tc.in))
		var ufe *codec.UnknownFieldError
		if !errors.As(err, &ufe) || !codec.IsDecodeError(err) {
			t.Errorf("%s: got %v, want an *UnknownFieldError in a *DecodeError", tc.in, err)
			continue
		}
		if ufe.Path != tc.path || ufe.Type != tc.typ || ufe.CaseOf != tc.caseOf {
			t.Errorf("%s: got path %q type %q case-of %q, want %q %q %q", tc.in, ufe.Path, ufe.Type, ufe.CaseOf, tc.path, tc.typ, tc.caseOf)
		}
		if !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.typ) {
			t.Errorf("%s: the message %q does not name the path and the type", tc.in, err)
		}
		if _, err := reg.DecodeSpec(strictMD[strictSpec](), codec.FormatJSON, []byte(tc.in)); err != nil {
			t.Errorf("%s: DecodeSpec (stored bytes) refused it: %v", tc.in, err)
		}
	}
}

// TestDecodeSpecInput_AcceptsWhatTheTypeHas: exact names, tags with
// options, a `json:"-,"` field named "-", promoted fields of an embedded
// struct, free map keys, and values that decide for themselves
// (json.RawMessage, a TextUnmarshaler, a spec with UnmarshalJSON) decode
// as DecodeSpec does.
func TestDecodeSpecInput_AcceptsWhatTheTypeHas(t *testing.T) {
	reg := strictRegistry(t)
	in := `{"MTU": 1400, "name": "n", "Opts": 2, "-": 3,
		"Hops": [{"gw": "a", "Metric": 1}], "Peers": {"Any Key": {"gw": "b"}},
		"Free": {"Bogus": 1}, "Next": {"gw": "c"},
		"Raw": {"whatever": true}, "Own": "text", "Zone": "z"}`
	r, err := reg.DecodeSpecInput(strictMD[strictSpec](), codec.FormatJSON, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	s := r.(*res[strictSpec]).TypedSpec()
	if s.MTU != 1400 || s.Name != "n" || s.Dash != 3 || s.Zone != "z" || s.Free["Bogus"] != 1 || s.Own.v != "text" {
		t.Errorf("decoded %+v", *s)
	}
	if _, err := reg.DecodeSpecInput(strictMD[selfJSON](), codec.FormatJSON, []byte(`{"Bogus": 1}`)); err != nil {
		t.Errorf("a spec with UnmarshalJSON decides for itself: %v", err)
	}
}

// TestDecodeSpecInput_LeavesBadJSONToTheDecoder: bytes that are not JSON
// or do not match the type's shape are the decoder's DecodeError, not an
// UnknownFieldError; an unregistered type is an UnknownTypeError.
func TestDecodeSpecInput_LeavesBadJSONToTheDecoder(t *testing.T) {
	reg := strictRegistry(t)
	for _, in := range []string{`{"MTU": `, `{"MTU": "x"}`, `[1]`} {
		_, err := reg.DecodeSpecInput(strictMD[strictSpec](), codec.FormatJSON, []byte(in))
		var ufe *codec.UnknownFieldError
		if !codec.IsDecodeError(err) || errors.As(err, &ufe) {
			t.Errorf("%s: got %v, want the decoder's DecodeError", in, err)
		}
	}
	md := resource.NewMetadata(testNS, "nope.test.resgraph.dev", "x", resource.VersionUndefined)
	if _, err := reg.DecodeSpecInput(md, codec.FormatJSON, []byte(`{}`)); !codec.IsUnknownTypeError(err) {
		t.Errorf("unregistered type: got %v", err)
	}
}
