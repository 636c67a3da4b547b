package qtransform

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestIndex_ClaimRetireAndForget: an input's output is claimed once and
// known from then on; mapping to another output retires the previous one
// (returned, to destroy) until it is forgotten, or claimed again; the
// input of every output is known. Claiming the output an input already has,
// and listing an input's outputs into the caller's buffer, allocate nothing.
func TestIndex_ClaimRetireAndForget(t *testing.T) {
	x := newIndex()
	all := func(in resource.ID) []resource.ID { return x.all(in, nil) }

	known, retired := x.claim("a", "oa")
	assert.False(t, known)
	assert.Empty(t, retired)
	known, retired = x.claim("a", "oa")
	assert.True(t, known)
	assert.Empty(t, retired)
	assert.Equal(t, []resource.ID{"oa"}, all("a"))

	_, retired = x.claim("a", "ob")
	assert.Equal(t, []resource.ID{"oa"}, retired, "the previous output is retired")
	assert.Equal(t, []resource.ID{"ob", "oa"}, all("a"))
	for _, out := range []resource.ID{"oa", "ob"} {
		in, ok := x.input(out)
		assert.True(t, ok)
		assert.Equal(t, resource.ID("a"), in)
	}
	_, retired = x.claim("a", "ob")
	assert.Equal(t, []resource.ID{"oa"}, retired, "still retired until forgotten")

	_, retired = x.claim("a", "oa")
	assert.Equal(t, []resource.ID{"ob"}, retired, "claimed again: oa is the output, ob retired")
	assert.Equal(t, []resource.ID{"oa", "ob"}, all("a"))
	x.forget("a", "ob")
	assert.Equal(t, []resource.ID{"oa"}, all("a"))
	_, ok := x.input("ob")
	assert.False(t, ok)

	// Another input claiming the same output takes it; claiming it back
	// gives it back.
	x.claim("b", "oa")
	in, _ := x.input("oa")
	assert.Equal(t, resource.ID("b"), in)
	x.claim("a", "oa")
	in, _ = x.input("oa")
	assert.Equal(t, resource.ID("a"), in)

	x.forget("a", "oa")
	assert.Empty(t, all("a"))

	x.claim("c", "oc")
	var buf [1]resource.ID
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		x.claim("c", "oc")
		_ = x.all("c", buf[:0])
	}))
}
