package recording_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestRC12_AWorldReadIsRecordedWithWhatItReturned: a world read the
// daemon notes (Recorder.Observe) is a world change of the recording, in
// its place among the state's changes, with its name and the value read
// (a copy: the caller may reuse its buffer) — also one noted before any
// change after the starting state; it writes back and reads again whole.
func TestRC12_AWorldReadIsRecordedWithWhatItReturned(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind, echoKind))
	require.NoError(t, err)
	started(t, rec)
	rec.Observe("kernel links", []byte("[]")) // at the starting state's revision: after it all the same
	require.NoError(t, st.Create(ctx, newNote("a", 1)))
	buf := []byte(`[{"Name":"eth0","Up":true}]`)
	rec.Observe("kernel links", buf)
	copy(buf, "XXXX")
	rec.Observe("", []byte("no name: ignored"))
	require.NoError(t, st.Create(ctx, newNote("b", 1)))
	r := settled(t, rec, st, noteKind, echoKind)
	var got []string
	for _, c := range r.Changes {
		got = append(got, fmt.Sprintf("%s %s %s %s", c.By, c.Op, c.Action, c.Value))
	}
	assert.Equal(t, []string{
		"world read kernel links []", "outside create  ", `world read kernel links [{"Name":"eth0","Up":true}]`, "outside create  ",
	}, got)
	back, err := recording.Decode(encode(t, r, registry(t)), registry(t))
	require.NoError(t, err)
	requireSameRecording(t, r, back)
	assert.Contains(t, recording.ChangeText(r, &r.Changes[2]), "world read: kernel links (27 bytes)", "the value is not printed")
}
