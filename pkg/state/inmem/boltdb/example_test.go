package boltdb_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// A state kept in a file: what one run writes, the next one reads.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "boltdb-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "state.db")
	reg := codec.NewRegistry()
	codec.MustRegister[pairSpec, pairDef](reg)
	ctx := context.Background()

	// The first run creates a resource and updates it.
	st, err := boltdb.Open(path, reg)
	if err != nil {
		log.Fatal(err)
	}
	r := newPair("one", 1)
	if err = st.Create(ctx, r); err != nil { // returns once on disk
		log.Fatal(err)
	}
	r.TypedSpec().A = 2
	if err = st.Update(ctx, r); err != nil {
		log.Fatal(err)
	}
	if err = st.Close(); err != nil {
		log.Fatal(err)
	}

	// The next run finds it, at the same version.
	st, err = boltdb.Open(path, reg)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	got, err := st.Get(ctx, resource.NewPointer("default", "Pairs.test.resgraph.dev", "one"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Metadata().Version(), got.(*pair).TypedSpec().A)
	// Output: 2 2
}
