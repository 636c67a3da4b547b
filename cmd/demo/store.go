package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
	"github.com/resgraph/resgraph/pkg/state/routed"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// openStore returns the state of a run with --config-db: the
// configuration namespace (the LinkSpecs, the agent's intent) in the bbolt
// file at path, compressed above atrest's default threshold and encrypted
// with the keys of keysFile (or of the environment variable cli.KeysEnv),
// and every other namespace in memory, rebuilt from the kernel at every
// start. The returned function closes the file, once the daemon's Run has
// returned. A wrong or missing key refuses the file, naming the key ID.
func openStore(ctx context.Context, path, keysFile string) (state.State, func() error, error) {
	keys := atrest.KeysFromEnv(cli.KeysEnv)
	if keysFile != "" {
		keys = atrest.KeysFromFile(keysFile)
	}
	sealer, err := atrest.New(ctx, atrest.Config{Keys: keys, CompressAbove: atrest.DefaultCompressAbove})
	if err != nil {
		return nil, nil, fmt.Errorf("--config-db %s: %w", path, err)
	}
	reg := codec.NewRegistry()
	if err := codec.Register[netres.LinkSpecSpec, netres.LinkSpecDef](reg); err != nil {
		return nil, nil, err
	}
	file, err := boltdb.Open(path, reg, boltdb.WithSealer(sealer))
	if err != nil {
		return nil, nil, fmt.Errorf("--config-db: %w", err)
	}
	st, err := routed.New([]routed.Rule{routed.Exact(netres.ConfigNamespace, file)}, routed.WithDefault(inmem.NewState()))
	if err != nil {
		return nil, nil, errors.Join(err, file.Close())
	}
	return st, file.Close, nil
}
