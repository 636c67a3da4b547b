package codec_test

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
)

// FuzzRoundTrip builds a resource from fuzzed metadata and a fuzzed nested
// spec and checks the round trip: whatever encodes decodes to an equal
// resource with the same timestamps and re-encodes to the same bytes, and
// the only spec that refuses to encode is one holding invalid UTF-8.
func FuzzRoundTrip(f *testing.F) {
	f.Add("ns", "id", "owner", uint64(3), true, int64(1_700_000_000), uint32(5), "f1\x00f2", "a=1\x00b=", "ann=x", int64(-1), "str", []byte{1, 2}, 3.5)
	f.Add("n\xffs", "i", "", uint64(0), false, int64(0), uint32(0), "", "", "", int64(0), "", []byte(nil), 0.0)
	f.Add("x", "y", "o", uint64(1<<63), false, int64(-62135596800), uint32(0), "a\x00a", "\xff=\xfe", "k=", int64(1<<62), "\xff", []byte{}, math.Copysign(0, -1))
	reg := registry(f)
	require.NoError(f, codec.Register[daemonSpec, def[daemonSpec]](reg))
	f.Fuzz(func(t *testing.T, ns, id, owner string, ver uint64, tearing bool, sec int64, nsec uint32,
		fins, labels, annotations string, n int64, s string, b []byte, fl float64,
	) {
		spec := nested{Int: int(n), Uint: ver, Float: fl, Str: s, Bytes: b, Bool: tearing,
			Slice: []Inner{{Name: owner, Tags: split(fins)}}, Map: map[string]*Inner{s: {Name: id}}}
		if n%3 == 0 {
			spec.Ptr = &Inner{Attrs: map[string]int{owner: int(nsec)}}
		}
		r := newRes(id, spec)
		md := resource.NewMetadata(ns, typeName[nested](), id, resource.NewVersion(ver))
		if tearing {
			md.SetPhase(resource.PhaseTearingDown)
		}
		_ = md.SetOwner(owner)
		md.SetCreated(time.Unix(sec, int64(nsec%1e9)))
		md.SetUpdated(time.Unix(-sec/2, int64(nsec%7)))
		*md.Finalizers() = split(fins)
		for _, kv := range split(labels) {
			k, v, _ := strings.Cut(kv, "=")
			md.Labels().Set(k, v)
		}
		for _, kv := range split(annotations) {
			k, v, _ := strings.Cut(kv, "=")
			md.Annotations().Set(k, v)
		}
		*r.Metadata() = md

		enc, err := reg.Encode(r)
		validSpec := utf8.ValidString(s) && utf8.ValidString(owner) && utf8.ValidString(id) && utf8.ValidString(fins)
		switch {
		case ns == "" || id == "":
			require.True(t, codec.IsEncodeError(err), "empty identity: %v", err)
			return
		case math.IsNaN(fl) || math.IsInf(fl, 0):
			require.Error(t, err)
			return
		case !validSpec:
			require.True(t, codec.IsEncodeError(err), "invalid UTF-8 in the spec must be refused: %v", err)
			return
		}
		require.NoError(t, err)
		got, err := reg.Decode(enc)
		require.NoError(t, err)
		require.True(t, resource.Equal(r, got), "round trip changed the resource")
		require.True(t, md.Created().Equal(got.Metadata().Created()))
		require.True(t, md.Updated().Equal(got.Metadata().Updated()))
		again, err := reg.Encode(got)
		require.NoError(t, err)
		require.Equal(t, enc, again)

		// The same values in a spec tagged as daemons tag theirs
		// (omitempty on every container, nil or empty by the fuzzer's
		// choice): equal under R1 after the round trip.
		d := daemonSpec{Hostname: s, MTU: nsec, Enabled: tearing, Raw: b, Since: md.Created()}
		if n%2 == 0 {
			d.Addresses, d.Options, d.ByLink, d.Routes = []string{}, map[string]string{}, map[string][]int{}, []daemonRoute{}
		}
		if n%5 == 0 {
			d.Addresses = split(fins)
			d.Options = map[string]string{owner: id}
			d.ByLink = map[string][]int{s: {}, id: nil, owner: {int(nsec)}}
			d.Routes = []daemonRoute{{Dest: id, Via: split(labels)}, {Via: []string{}}}
			d.Gateway = &daemonRoute{Via: []string{}}
		}
		dr := newRes(id, d)
		denc, err := reg.Encode(dr)
		if !utf8.ValidString(labels) || !utf8.ValidString(s) || !utf8.ValidString(owner) || !utf8.ValidString(fins) {
			return // a spec holding invalid UTF-8 is refused (checked above)
		}
		require.NoError(t, err)
		dgot, err := reg.Decode(denc)
		require.NoError(t, err)
		require.True(t, resource.Equal(dr, dgot), "round trip of omitempty containers changed the resource")
	})
}

// split splits a fuzzed string at NUL bytes (nil for "").
func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// FuzzDecode feeds arbitrary bytes to Decode: it never panics, fails only
// with the package's typed errors, and whatever it accepts re-encodes to
// an equal resource.
func FuzzDecode(f *testing.F) {
	reg := registry(f)
	for _, r := range []resource.Resource{newRes("a", 1), newRes("b", nested{Str: "x"}), newRes("c", own{A: 2})} {
		r.Metadata().Labels().Set("k", "v")
		b, err := reg.Encode(r)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("rgr\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := reg.Decode(data)
		if err != nil {
			require.True(t, codec.IsDecodeError(err) || codec.IsUnknownTypeError(err), "untyped error %T: %v", err, err)
			return
		}
		enc, err := reg.Encode(r)
		require.NoError(t, err)
		again, err := reg.Decode(enc)
		require.NoError(t, err)
		require.True(t, resource.Equal(r, again))
	})
}
