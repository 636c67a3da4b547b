package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

type secretSpec struct{ Key string }

func (s secretSpec) RedactSpec() any { return fmt.Sprintf("key of %d bytes", len(s.Key)) }

type secretDef struct{}

func (secretDef) Definition() typed.Definition {
	return typed.Definition{Type: "Secrets.demo.resgraph.dev", DefaultNamespace: "demo"}
}

// TestChangeLog_SpecsAreRedacted: the change log prints a spec that holds
// secrets in its redacted form (resource.SpecRedacter), and any other as
// it is.
func TestChangeLog_SpecsAreRedacted(t *testing.T) {
	r := typed.NewDefault[secretSpec, secretDef]("k", secretSpec{Key: "s3cr3t"})
	line := describeChange(state.Created, nil, r)
	assert.Contains(t, line, "key of 6 bytes")
	assert.NotContains(t, line, "s3cr3t")
	old := typed.NewDefault[secretSpec, secretDef]("k", secretSpec{Key: "0ld"})
	line = describeChange(state.Updated, old, r)
	assert.Contains(t, line, "key of 6 bytes")
	assert.NotContains(t, line, "s3cr3t")
	plain := typed.NewDefault[struct{ N int }, secretDef]("n", struct{ N int }{N: 4})
	assert.Equal(t, "{N:4}", specString(plain))
}
