package boltdb_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// ifaceSpec is the spec of the sealing benchmarks: a daemon's interfaces,
// JSON-encoded, of about the size asked for.
type ifaceSpec struct{ Links []ifaceLink }

type ifaceLink struct {
	Name, Address, Gateway string
	MTU                    int
	Up                     bool
}

type ifaceDef struct{}

func (ifaceDef) Definition() typed.Definition {
	return typed.Definition{Type: "Ifaces.test.resgraph.dev", DefaultNamespace: "default"}
}

// newIfaces returns a resource whose encoded spec is about size bytes.
func newIfaces(id string, size int, rng *rand.Rand) *typed.Resource[ifaceSpec, ifaceDef] {
	var s ifaceSpec
	for n := 0; n < size; n += 80 {
		s.Links = append(s.Links, ifaceLink{
			Name:    fmt.Sprintf("eth%d", len(s.Links)),
			Address: fmt.Sprintf("10.%d.%d.%d/24", rng.IntN(256), rng.IntN(256), rng.IntN(256)),
			Gateway: fmt.Sprintf("10.%d.0.1", rng.IntN(256)),
			MTU:     1280 + rng.IntN(8000), Up: rng.IntN(2) == 0,
		})
	}
	return typed.New[ifaceSpec, ifaceDef](resource.NewMetadata(testNS, "Ifaces.test.resgraph.dev", id, resource.VersionUndefined), s)
}

// BenchmarkSealedCreates creates resources of a small spec (the size of
// the demo's resources) and of a 4 KiB one, plain, compressed, encrypted,
// and both, under the interval policy (so that a write's time is its own
// work, not a wait for fdatasync), and reports the stored record's size
// per resource (rec-B/res) and the file's size per resource (file-B/res,
// which bbolt's page and growth granularity dominate for small records)
// after closing it.
//
//	RESGRAPH_MUTATION_DETECTOR=0 go test -run '^$' -bench SealedCreates -benchtime 2000x -count 6 .
func BenchmarkSealedCreates(b *testing.B) {
	key := atrest.Key{ID: "k1", Secret: make([]byte, atrest.KeySize)}
	for _, size := range []int{160, 4096} {
		for name, cfg := range map[string]atrest.Config{
			"plain":    {},
			"zstd":     {CompressAbove: atrest.DefaultCompressAbove},
			"aes":      {Keys: atrest.StaticKeys(key)},
			"zstd+aes": {Keys: atrest.StaticKeys(key), CompressAbove: atrest.DefaultCompressAbove},
		} {
			b.Run(fmt.Sprintf("spec=%d/%s", size, name), func(b *testing.B) {
				benchSealedCreates(b, size, cfg)
			})
		}
	}
}

func benchSealedCreates(b *testing.B, size int, cfg atrest.Config) {
	s, err := atrest.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "sealed.db")
	reg := registry()
	st, err := boltdb.Open(path, reg, boltdb.WithSealer(s), boltdb.WithInterval(benchInterval, 0))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rs := make([]resource.Resource, b.N)
	for i := range rs {
		rs[i] = newIfaces(fmt.Sprintf("r%07d", i), size, rng)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := st.Create(ctx, rs[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	reopened, err := boltdb.Open(path, reg, boltdb.WithSealer(s))
	if err != nil {
		b.Fatal(err)
	}
	stored, err := boltdb.StoredBytes(reopened)
	if cerr := reopened.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(stored)/float64(b.N), "rec-B/res")
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(info.Size())/float64(b.N), "file-B/res")
}
