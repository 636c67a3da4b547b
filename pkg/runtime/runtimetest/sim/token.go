package sim

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A token names a run exactly: its seed, the workload ops it keeps, the
// tapes of its schedule and step faults (their non-zero decisions; a
// decision past a tape's end is zero), and its write faults by the write
// they hit. It is "s1-" and the base64 of unsigned varints (and the write
// faults' keys, each after its length).
const tokenPrefix = "s1-"

const (
	tokenKeepAll  = 1 << iota // every workload op (keep is nil)
	tokenNoFaults             // the reference run
)

func encodeToken(p plan) string {
	var b []byte
	b = binary.AppendUvarint(b, p.seed)
	var flags uint64
	if p.keep == nil {
		flags |= tokenKeepAll
	}
	if p.noFaults {
		flags |= tokenNoFaults
	}
	b = binary.AppendUvarint(b, flags)
	if p.keep != nil {
		b = binary.AppendUvarint(b, uint64(len(p.keep)))
		prev := -1
		for _, i := range p.keep {
			b = binary.AppendUvarint(b, uint64(i-prev-1))
			prev = i
		}
	}
	b = appendSparse(b, p.sched)
	b = appendSparse(b, p.faults)
	b = binary.AppendUvarint(b, uint64(len(p.writeFaults)))
	for _, key := range slices.Sorted(maps.Keys(p.writeFaults)) {
		b = binary.AppendUvarint(b, uint64(len(key)))
		b = append(b, key...)
		b = binary.AppendUvarint(b, uint64(p.writeFaults[key]))
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// appendSparse appends the non-zero entries of tape: their count, then
// each as the gap since the previous one and its value.
func appendSparse(b []byte, tape []uint32) []byte {
	n := 0
	for _, v := range tape {
		if v != 0 {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	prev := -1
	for i, v := range tape {
		if v != 0 {
			b = binary.AppendUvarint(b, uint64(i-prev-1))
			b = binary.AppendUvarint(b, uint64(v))
			prev = i
		}
	}
	return b
}

// seedPrefix starts the token of a seed's run, as Test runs it: the
// schedule and the faults drawn from the seed ("seed=17").
const seedPrefix = "seed="

var errBadToken = errors.New("sim: not a replay token (it starts with " + tokenPrefix + " or " + seedPrefix + ")")

func decodeToken(s string) (plan, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutPrefix(s, seedPrefix); ok {
		seed, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			return plan{}, fmt.Errorf("%w: %v", errBadToken, err)
		}
		return plan{seed: seed, explore: true}, nil
	}
	body, ok := strings.CutPrefix(s, tokenPrefix)
	if !ok {
		return plan{}, errBadToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return plan{}, fmt.Errorf("%w: %v", errBadToken, err)
	}
	d := decoder{b: raw}
	p := plan{seed: d.next()}
	flags := d.next()
	p.noFaults = flags&tokenNoFaults != 0
	if flags&tokenKeepAll == 0 {
		n := d.count()
		p.keep = make([]int, 0, n)
		prev := -1
		for range n {
			prev += int(d.next()) + 1
			p.keep = append(p.keep, prev)
		}
	}
	p.sched = d.sparse()
	p.faults = d.sparse()
	if n := d.count(); n > 0 {
		p.writeFaults = make(map[string]faultKind, n)
		for range n {
			key := d.bytes()
			k := d.next()
			if d.err != nil || k == 0 || k > uint64(faultKill) {
				return plan{}, fmt.Errorf("%w: malformed", errBadToken)
			}
			p.writeFaults[string(key)] = faultKind(k)
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return plan{}, fmt.Errorf("%w: malformed", errBadToken)
	}
	return p, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) next() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadToken
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count, bounded by what is left (each entry takes a byte).
func (d *decoder) count() int {
	n := d.next()
	if n > uint64(len(d.b)) {
		d.err = errBadToken
		return 0
	}
	return int(n)
}

// bytes reads a length and that many bytes.
func (d *decoder) bytes() []byte {
	n := d.count()
	if d.err != nil || n > len(d.b) {
		d.err = errBadToken
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) sparse() []uint32 {
	n := d.count()
	var tape []uint32
	for range n {
		gap := d.next()
		v := d.next()
		if d.err != nil || gap > 1<<24 || v > 1<<31 {
			d.err = errBadToken
			return nil
		}
		for range gap {
			tape = append(tape, 0)
		}
		tape = append(tape, uint32(v))
	}
	return tape
}
