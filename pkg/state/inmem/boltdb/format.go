package boltdb

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/resgraph/resgraph/pkg/resource"
)

// The file is a bbolt database with two top-level buckets and nothing
// else:
//
//	"resgraph"   metadata:
//	  "format"   the format version (uvarint): 1, or 2 once a state
//	             with a sealer (WithSealer) opened it
//	  "keycheck/" + key ID
//	             the key check of each key that wrote records
//	             (atrest.KeySet.KeyCheck), kept before its first record
//	  "rotation" the ID of the key a rotation rewrites every record
//	             under, while one is under way (absent otherwise)
//	  "lineage"  4 bytes, big-endian: chosen at random when the file is
//	             created (bookmarks name it, see inmem.Restored)
//	  "run"      4 bytes, big-endian: the number of opens that wrote to
//	             the file, the current one included
//	  "floor"    8 bytes, big-endian: the latest creation time given by
//	             any create ever committed, in Unix nanoseconds (absent
//	             before the first)
//	"resources"  one key per stored resource:
//	  key        uvarint len(namespace), namespace, uvarint len(type),
//	             type, ID
//	  value      the codec encoding of the resource (pkg/resource/codec)
//	             in format 1; in format 2, the record of that encoding
//	             (package atrest: the encoding itself, or framed:
//	             compressed and/or encrypted, the key ID in the frame)
var (
	metaBucket      = []byte("resgraph")
	resourcesBucket = []byte("resources")

	formatKey      = []byte("format")
	lineageKey     = []byte("lineage")
	runKey         = []byte("run")
	floorKey       = []byte("floor")
	keyCheckPrefix = "keycheck/"
	rotationKey    = []byte("rotation")
)

// The formats: formatVersion is the newest this package reads (a later
// one is refused with ErrNewerFormat); a new file is created in
// plainFormat, and a state with a sealer moves it to sealedFormat before
// its first write, so that a version of this package that reads only
// plainFormat refuses the file rather than misreading its records.
const (
	plainFormat   = 1
	sealedFormat  = 2
	formatVersion = sealedFormat
)

// keyCheckKey is the metadata key of the key check of key ID id.
func keyCheckKey(id string) []byte { return []byte(keyCheckPrefix + id) }

// Limits of bbolt: a key and a value that exceed them fail a commit, so a
// write is refused before (see store.Append).
const (
	maxKeySize   = 32768
	maxValueSize = 1<<31 - 2
)

// appendKey appends the key of a resource.
func appendKey(dst []byte, ns resource.Namespace, typ resource.Type, id resource.ID) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ns)))
	dst = append(dst, ns...)
	dst = binary.AppendUvarint(dst, uint64(len(typ)))
	dst = append(dst, typ...)
	return append(dst, id...)
}

// keySize is the length of the key of a resource.
func keySize(ns resource.Namespace, typ resource.Type, id resource.ID) int {
	return uvarintLen(len(ns)) + len(ns) + uvarintLen(len(typ)) + len(typ) + len(id)
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// parseKey splits a key into namespace, type and ID.
func parseKey(key []byte) (ns resource.Namespace, typ resource.Type, id resource.ID, err error) {
	rest := key
	part := func() (string, error) {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return "", fmt.Errorf("malformed key")
		}
		s := string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
		return s, nil
	}
	if ns, err = part(); err != nil {
		return "", "", "", err
	}
	if typ, err = part(); err != nil {
		return "", "", "", err
	}
	return ns, typ, string(rest), nil
}

// keyString names a key for an error: its resource when it parses, else
// the raw bytes, quoted.
func keyString(key []byte) string {
	ns, typ, id, err := parseKey(key)
	if err != nil || ns == "" || typ == "" || id == "" {
		return strconv.Quote(string(key))
	}
	return resource.PointerString(resource.NewPointer(ns, typ, id))
}
