package main

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state/atrest"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// BenchmarkConfigDBRecord measures what --config-db does to each of the
// demo's configuration records (the sample intent's LinkSpecs, encoded):
// the CPU time to seal one (a write) and to open one (a read when the
// file opens), per record, and the record's size (B/record, the mean over
// the three links), plain, compressed (atrest's default threshold),
// encrypted, and both — what --config-db uses.
//
//	go test -run '^$' -bench ConfigDBRecord -benchtime 3000x -count 6 -cpu 1 .
func BenchmarkConfigDBRecord(b *testing.B) {
	in, err := loadIntent("")
	if err != nil {
		b.Fatal(err)
	}
	reg := codec.NewRegistry()
	codec.MustRegister[netres.LinkSpecSpec, netres.LinkSpecDef](reg)
	var encs [][]byte
	for _, l := range in.Links {
		ls := netres.NewLinkSpec(l.Name)
		*ls.TypedSpec() = l.Spec
		ls.Metadata().SetVersion(ls.Metadata().Version().Next())
		enc, err := reg.Encode(ls)
		if err != nil {
			b.Fatal(err)
		}
		encs = append(encs, enc)
	}
	key := atrest.Key{ID: "demo-1", Secret: make([]byte, atrest.KeySize)}
	for _, c := range []struct {
		name string
		cfg  atrest.Config
	}{
		{"plain", atrest.Config{}},
		{"zstd", atrest.Config{CompressAbove: atrest.DefaultCompressAbove}},
		{"aes", atrest.Config{Keys: atrest.StaticKeys(key)}},
		{"zstd+aes", atrest.Config{Keys: atrest.StaticKeys(key), CompressAbove: atrest.DefaultCompressAbove}},
	} {
		s, err := atrest.New(context.Background(), c.cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("seal/"+c.name, func(b *testing.B) { benchSealRecords(b, s, encs) })
		b.Run("open/"+c.name, func(b *testing.B) { benchOpenRecords(b, s, encs) })
	}
}

func benchSealRecords(b *testing.B, s *atrest.Sealer, encs [][]byte) {
	var rec []byte
	total := 0
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		var err error
		if rec, err = s.Seal(rec[:0], "config", netres.LinkSpecType, "eth0", encs[i%len(encs)]); err != nil {
			b.Fatal(err)
		}
		if i < len(encs) {
			total += len(rec)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(total)/float64(min(b.N, len(encs))), "B/record")
}

func benchOpenRecords(b *testing.B, s *atrest.Sealer, encs [][]byte) {
	recs := make([][]byte, len(encs))
	for i, enc := range encs {
		var err error
		if recs[i], err = s.Seal(nil, "config", netres.LinkSpecType, "eth0", enc); err != nil {
			b.Fatal(err)
		}
	}
	var out []byte
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		var err error
		if out, err = s.Open(out[:0], "config", netres.LinkSpecType, "eth0", recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the CPU time the process has used: on a loaded machine
// it tells a benchmark's cost better than the wall clock (run with -cpu 1).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
