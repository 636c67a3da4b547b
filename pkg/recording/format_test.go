package recording_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// sample is a recording with every kind of change.
func sample() *recording.Recording {
	start := time.Unix(1_800_000_000, 123)
	withOwner := func(r resource.Resource, owner string) resource.Resource {
		_ = r.Metadata().SetOwner(owner)
		r.Metadata().SetVersion(resource.VersionUndefined.Next().Next())
		return r
	}
	secret := typed.NewDefault[SecretSpec, SecretDef]("k", SecretSpec{Key: "s3cr3t"})
	secret.Metadata().Labels().Set("app", "x")
	return &recording.Recording{
		Source: "test", Reason: "on demand", Taken: start.Add(time.Minute), Start: start, End: start.Add(time.Minute),
		Requested: start.Add(-time.Second), Revision: 42, Coalesced: 1,
		Kinds: []recording.Kind{
			{Namespace: ns, Type: echoKind.Type()}, {Namespace: ns, Type: noteKind.Type()},
			{Namespace: ns, Type: secretKind.Type(), Sensitive: true},
		},
		Controllers: []string{"a", "b"},
		Replay:      "go test ./x -run TestReplay -sim.recording=FILE",
		Initial:     []resource.Resource{newNote("n1", 1), secret},
		Changes: []recording.Change{
			change(recording.Change{Offset: time.Millisecond, Revision: 43, By: recording.ByOutside, Op: recording.OpCreate, Resource: newNote("n2", 1), Coalesced: true}),
			change(recording.Change{Offset: 2 * time.Millisecond, Revision: 44, By: recording.ByController, Op: recording.OpUpdate, Writer: "a", Resource: withOwner(newNote("n3", 3), "a")}),
			{Offset: 2 * time.Millisecond, Revision: 44, By: recording.ByController, Op: recording.OpUpdate, Writer: "a", Pointer: resource.PointerOf(resource.NewPointer(ns, echoKind.Type(), "e")), Version: 7, Read: 43, Item: resource.PointerOf(resource.NewPointer(ns, noteKind.Type(), "n2"))},
			{Offset: 3 * time.Millisecond, Revision: 44, By: recording.ByWorld, Op: recording.OpAction, Action: "cable unplugged"},
			{Offset: 3 * time.Millisecond, Revision: 44, By: recording.ByWorld, Op: recording.OpRead, Action: "kernel links", Value: []byte(`[{"Name":"eth0"}]`)},
			change(recording.Change{Offset: 4 * time.Millisecond, Revision: 45, By: recording.ByOutside, Op: recording.OpDestroy, Resource: newNote("n1", 1)}),
		},
		Final: []resource.Resource{newNote("n2", 1), withOwner(newNote("n3", 3), "a")},
		Passes: []recording.Pass{
			{Controller: "b", Reads: []recording.PassRead{{Index: 0, Revision: 43, Kind: resource.KindOf(resource.NewKind(ns, noteKind.Type()))}}, Batch: 42},
			{Controller: "a", Item: resource.PointerOf(resource.NewPointer(ns, noteKind.Type(), "n2")), Reads: []recording.PassRead{{Index: 0, Revision: 43}, {Index: 2, Revision: 44, Kind: resource.KindOf(resource.NewKind(ns, echoKind.Type()))}}, Commits: 2},
		},
	}
}

// change sets a change's pointer and version from its resource.
func change(c recording.Change) recording.Change {
	c.Pointer, c.Version = resource.PointerOf(c.Resource.Metadata()), c.Resource.Metadata().Version().Value()
	return c
}

func encode(t testing.TB, rec *recording.Recording, reg *codec.Registry) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, recording.Write(&b, rec, reg))
	return b.Bytes()
}

// TestRC4_RoundTrip: writing and reading a recording gives back an equal
// one.
func TestRC4_RoundTrip(t *testing.T) {
	reg := registry(t)
	in := sample()
	out, err := recording.Decode(encode(t, in, reg), reg)
	require.NoError(t, err)
	requireSameRecording(t, in, out)
}

func requireSameRecording(t *testing.T, in, out *recording.Recording) {
	t.Helper()
	for _, p := range [][2]time.Time{{in.Taken, out.Taken}, {in.Start, out.Start}, {in.End, out.End}, {in.Requested, out.Requested}} {
		require.True(t, p[0].Equal(p[1]), "%v != %v", p[0], p[1])
	}
	assert.Equal(t, []any{in.Source, in.Reason, in.Revision, in.Coalesced, in.Kinds, in.Controllers, in.Replay},
		[]any{out.Source, out.Reason, out.Revision, out.Coalesced, out.Kinds, out.Controllers, out.Replay})
	require.Len(t, out.Initial, len(in.Initial))
	for i := range in.Initial {
		assert.True(t, resource.Equal(in.Initial[i], out.Initial[i]))
	}
	require.Len(t, out.Final, len(in.Final))
	for i := range in.Final {
		assert.True(t, resource.Equal(in.Final[i], out.Final[i]))
	}
	require.Len(t, out.Changes, len(in.Changes))
	for i, c := range in.Changes {
		o := out.Changes[i]
		assert.Equal(t, []any{c.Offset, c.Revision, c.By, c.Op, c.Writer, c.Action, c.Coalesced, c.Pointer, c.Version, c.Read, c.Item, string(c.Value)},
			[]any{o.Offset, o.Revision, o.By, o.Op, o.Writer, o.Action, o.Coalesced, o.Pointer, o.Version, o.Read, o.Item, string(o.Value)})
		assert.True(t, resource.Equal(c.Resource, o.Resource))
	}
	assert.Equal(t, len(in.Passes), len(out.Passes))
	for i, p := range in.Passes {
		assert.Equal(t, p, out.Passes[i])
	}
}

// TestRC4_TruncatedAnywhere: a file cut at any byte is an error wrapping
// ErrTruncated (or a not-a-recording VersionError, before the magic's
// end), never a recording.
func TestRC4_TruncatedAnywhere(t *testing.T) {
	reg := registry(t)
	data := encode(t, sample(), reg)
	for n := range len(data) {
		rec, err := recording.Decode(data[:n], reg)
		require.Nil(t, rec, "cut at %d", n)
		var verr *recording.VersionError
		if n < 5 {
			require.ErrorAs(t, err, &verr, "cut at %d", n)
			continue
		}
		require.ErrorIs(t, err, recording.ErrTruncated, "cut at %d", n)
		var ferr *recording.FormatError
		require.ErrorAs(t, err, &ferr)
	}
}

// TestRC4_CorruptedAnywhere: a file with any byte changed is an error (a
// checksum, a field, a frame type or the version), never a recording.
func TestRC4_CorruptedAnywhere(t *testing.T) {
	reg := registry(t)
	data := encode(t, sample(), reg)
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x41
		rec, err := recording.Decode(bad, reg)
		require.Nil(t, rec, "byte %d changed", i)
		var verr *recording.VersionError
		var ferr *recording.FormatError
		require.True(t, errors.As(err, &verr) || errors.As(err, &ferr), "byte %d changed: %v", i, err)
	}
	_, err := recording.Decode(append(bytes.Clone(data), 0), reg)
	require.ErrorIs(t, err, recording.ErrCorrupted, "a byte after the end frame")
}

// TestRC4_AnotherVersion: a file of another format version is a
// VersionError naming it.
func TestRC4_AnotherVersion(t *testing.T) {
	reg := registry(t)
	data := encode(t, sample(), reg)
	var verr *recording.VersionError
	for _, v := range []int{1, 2, 6} { // 2: changes without their item, no world reads
		data[5] = byte(v)
		_, err := recording.Decode(data, reg)
		require.ErrorAs(t, err, &verr)
		assert.Equal(t, v, verr.Version)
		assert.Contains(t, err.Error(), fmt.Sprintf("format version %d", v))
	}
	_, err := recording.Decode([]byte("PK\x03\x04 a zip file"), reg)
	require.ErrorAs(t, err, &verr)
	assert.Equal(t, -1, verr.Version)
}

// TestRC4_Version3IsRead: a file of format version 3 (no pass frames,
// four counts in its end frame) reads as a recording without passes; a
// pass frame in it is corrupt.
func TestRC4_Version3IsRead(t *testing.T) {
	reg := registry(t)
	in := sample()
	passes := in.Passes
	in.Passes = nil
	out, err := recording.Decode(asV3(t, encode(t, in, reg)), reg)
	require.NoError(t, err)
	requireSameRecording(t, in, out)

	in.Passes = passes
	_, err = recording.Decode(asV3(t, encode(t, in, reg)), reg)
	require.ErrorIs(t, err, recording.ErrCorrupted)
}

// TestRC4_Version4IsRead: a file of format version 4 (passes without
// their batch) reads as a recording whose passes say no batch; a pass
// frame with a batch in it is corrupt (a trailing field).
func TestRC4_Version4IsRead(t *testing.T) {
	reg := registry(t)
	in := sample()
	for i := range in.Passes {
		in.Passes[i].Batch = 0
	}
	out, err := recording.Decode(asV4(t, encode(t, in, reg), 1), reg)
	require.NoError(t, err)
	requireSameRecording(t, in, out)

	_, err = recording.Decode(asV4(t, encode(t, in, reg), 0), reg)
	require.ErrorIs(t, err, recording.ErrCorrupted)
}

// asV4 turns the bytes of a recording written as version 5, whose passes
// say no batch, into version 4's: its version, and each pass frame
// without its last cut bytes (its batch, one byte when 0).
func asV4(t testing.TB, data []byte, cut int) []byte {
	return rewritten(t, data, 4, func(typ byte, payload, _ []byte) []byte {
		if typ == 7 { // a pass frame: its batch dropped
			return payload[:len(payload)-cut]
		}
		return payload
	})
}

// asV3 turns the bytes of a recording written as version 4 or 5 into
// version 3's: its version, and its end frame without the count of
// passes.
func asV3(t testing.TB, data []byte) []byte {
	return rewritten(t, data, 3, func(typ byte, payload, rest []byte) []byte {
		if typ == 6 { // the end frame: its last count (of passes) dropped
			require.Empty(t, rest)
			return payload[:len(payload)-1]
		}
		return payload
	})
}

// rewritten returns the bytes of a recording with the format version
// given and each frame's payload as edit returns it (rest: the frames
// after it), checksummed again.
func rewritten(t testing.TB, data []byte, version byte, edit func(typ byte, payload, rest []byte) []byte) []byte {
	t.Helper()
	out := append([]byte("RGREC"), version)
	b := data[6:]
	for len(b) > 0 {
		typ := b[0]
		n, k := binary.Uvarint(b[1:])
		require.Positive(t, k)
		payload := b[1+k : 1+k+int(n)]
		b = b[1+k+int(n)+4:]
		payload = edit(typ, payload, b)
		out = append(out, typ)
		out = binary.AppendUvarint(out, uint64(len(payload)))
		out = append(out, payload...)
		crc := crc32.Update(crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), []byte{typ}), crc32.MakeTable(crc32.Castagnoli), payload)
		out = binary.LittleEndian.AppendUint32(out, crc)
	}
	return out
}

// TestRC13_APassFrameIsChecked: a pass of a controller the header does
// not name, of no read, with a read at revision 0 or reads out of order,
// or with a partial item, is corrupt.
func TestRC13_APassFrameIsChecked(t *testing.T) {
	reg := registry(t)
	item := resource.PointerOf(resource.NewPointer(ns, noteKind.Type(), "n2"))
	for name, p := range map[string]recording.Pass{
		"unknown controller": {Controller: "z", Reads: []recording.PassRead{{Revision: 43}}},
		"no read":            {Controller: "a"},
		"revision 0":         {Controller: "a", Reads: []recording.PassRead{{Revision: 0}}},
		"reads out of order": {Controller: "a", Reads: []recording.PassRead{{Index: 2, Revision: 43}, {Index: 1, Revision: 44}}},
		"partial item":       {Controller: "a", Item: resource.PointerOf(resource.NewPointer(ns, "", item.ID())), Reads: []recording.PassRead{{Revision: 43}}},
	} {
		in := sample()
		in.Passes = append(in.Passes, p)
		rec, err := recording.Decode(encode(t, in, reg), reg)
		require.Nil(t, rec, name)
		require.ErrorIs(t, err, recording.ErrCorrupted, name)
	}
}

// TestRC4_UnknownTypes: a recording of types the registry does not know
// is an UnknownTypesError naming each.
func TestRC4_UnknownTypes(t *testing.T) {
	data := encode(t, sample(), registry(t))
	reg := codec.NewRegistry()
	require.NoError(t, codec.Register[NoteSpec, NoteDef](reg))
	rec, err := recording.Decode(data, reg)
	require.Nil(t, rec)
	var uerr *recording.UnknownTypesError
	require.ErrorAs(t, err, &uerr)
	assert.Equal(t, []string{echoKind.Type(), secretKind.Type()}, uerr.Types)
}

// TestRC4_ReadHeader: ReadHeader gives the header's fields without the
// types' registry, and fails as Read does on a file that is no recording,
// of another version, or cut or damaged in its header.
func TestRC4_ReadHeader(t *testing.T) {
	in := sample()
	data := encode(t, in, registry(t))
	h, err := recording.ReadHeader(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, []any{in.Source, in.Reason, in.Revision, in.Coalesced, in.Controllers, in.Replay},
		[]any{h.Source, h.Reason, h.Revision, h.Coalesced, h.Controllers, h.Replay})
	require.True(t, in.Start.Equal(h.Start) && in.End.Equal(h.End), "start and end")
	assert.Empty(t, h.Kinds, "nothing after the header is read")

	var verr *recording.VersionError
	_, err = recording.ReadHeader(strings.NewReader("PK\x03\x04 a zip file"))
	require.ErrorAs(t, err, &verr)
	bad := bytes.Clone(data)
	bad[5] = 2
	_, err = recording.ReadHeader(bytes.NewReader(bad))
	require.ErrorAs(t, err, &verr)
	assert.Equal(t, 2, verr.Version)
	_, err = recording.ReadHeader(bytes.NewReader(data[:12]))
	require.ErrorIs(t, err, recording.ErrTruncated)
	bad = bytes.Clone(data)
	bad[10] ^= 0x41
	_, err = recording.ReadHeader(bytes.NewReader(bad))
	require.ErrorIs(t, err, recording.ErrCorrupted)
}

// TestRC4_CheckFrames: CheckFrames gives the header's fields without the
// types' registry, and refuses a file cut at any byte (ErrTruncated), a
// frame damaged after the header (ErrCorrupted: its checksum) and a byte
// after the end frame, as Read does.
func TestRC4_CheckFrames(t *testing.T) {
	in := sample()
	data := encode(t, in, registry(t))
	h, err := recording.CheckFrames(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, in.Replay, h.Replay)
	for n := 5; n < len(data); n++ {
		_, err := recording.CheckFrames(bytes.NewReader(data[:n]))
		require.ErrorIs(t, err, recording.ErrTruncated, "cut at %d", n)
	}
	bad := bytes.Clone(data)
	bad[len(bad)-20] ^= 0x41
	_, err = recording.CheckFrames(bytes.NewReader(bad))
	require.ErrorIs(t, err, recording.ErrCorrupted)
	_, err = recording.CheckFrames(bytes.NewReader(append(bytes.Clone(data), 0)))
	require.ErrorIs(t, err, recording.ErrCorrupted, "a byte after the end frame")
}

// FuzzDecode: no input makes Decode panic, and whatever it accepts
// writes back to the same bytes.
func FuzzDecode(f *testing.F) {
	reg := registry(f)
	data := encode(f, sample(), reg)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(encode(f, &recording.Recording{}, reg))
	v3 := sample()
	v3.Passes = nil
	f.Add(asV3(f, encode(f, v3, reg)))
	v4 := sample()
	for i := range v4.Passes {
		v4.Passes[i].Batch = 0
	}
	f.Add(asV4(f, encode(f, v4, reg), 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := recording.Decode(b, reg)
		if err != nil {
			require.Nil(t, rec)
			var verr *recording.VersionError
			var ferr *recording.FormatError
			var uerr *recording.UnknownTypesError
			require.True(t, errors.As(err, &verr) || errors.As(err, &ferr) || errors.As(err, &uerr), "untyped error %v", err)
			return
		}
		again, err := recording.Decode(encode(t, rec, reg), reg)
		require.NoError(t, err)
		requireSameRecording(t, rec, again)
	})
}
