package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

type encSpec struct{ V int }

type encDef struct{}

func (encDef) Definition() typed.Definition {
	return typed.Definition{Type: "Enc.test", DefaultNamespace: "ns"}
}

// TestEncodings_OneEncodingPerSnapshot: the server's table of encoded
// snapshots encodes an object once per set of options, and never hands
// the message of one object out for another, even an equal one.
func TestEncodings_OneEncodingPerSnapshot(t *testing.T) {
	var e encodings
	r := typed.New[encSpec, encDef](resource.NewMetadata("ns", "Enc.test", "a", resource.NewVersion(1)), encSpec{V: 1})
	calls := 0
	encode := func(r resource.Resource) func() (*pb.Resource, error) {
		return func() (*pb.Resource, error) {
			calls++
			return &pb.Resource{Metadata: &pb.Metadata{Id: r.Metadata().ID(), Version: r.Metadata().Version().Value()}}, nil
		}
	}
	first, err := e.get(r, true, false, encode(r))
	require.NoError(t, err)
	again, err := e.get(r, true, false, encode(r))
	require.NoError(t, err)
	assert.Same(t, first, again)
	assert.Equal(t, 1, calls)

	_, _ = e.get(r, true, true, encode(r))
	assert.Equal(t, 2, calls, "other options: another encoding")
	c := r.DeepCopy()
	other, _ := e.get(c, true, false, encode(c))
	assert.Equal(t, 3, calls, "an equal object of its own: encoded again")
	assert.NotSame(t, first, other)
}
