package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
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

// TestChangeLog_DestroysTellTheirVersion: a destroy through the change
// log's state tells the version it destroyed, of a logged kind and of
// another (state.CommitReporter), as the inner state does, so that the
// flight recorder pairs the destroy with the pass that made it.
func TestChangeLog_DestroysTellTheirVersion(t *testing.T) {
	ctx := context.Background()
	st := newChangeLog(inmem.NewState(), zap.NewNop())
	for _, r := range []resource.Resource{
		netres.NewAddressSpec("eth0/10.0.0.2-24"),
		typed.NewDefault[secretSpec, secretDef]("k", secretSpec{Key: "x"}),
	} {
		require.True(t, logged(r.Metadata()) == (r.Metadata().Type() == netres.AddressSpecType))
		require.NoError(t, st.Create(ctx, r))
		_, err := st.Teardown(ctx, r.Metadata())
		require.NoError(t, err)
		got, err := state.CommitReporterOf(st).DestroyCommitted(ctx, r.Metadata())
		require.NoError(t, err)
		assert.Equal(t, uint64(2), got.Value(), "%s", r.Metadata().Type())
	}
}
