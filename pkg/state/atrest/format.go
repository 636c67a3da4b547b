package atrest

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A stored record is either a resource's encoding as is (a record written
// without encryption or compression: the bytes of pkg/resource/codec,
// which begin with "rgr") or a framed record:
//
//	magic    "rgs" and the format version 1 (4 bytes)
//	flags    1 byte: flagZstd (the payload is compressed), flagAESGCM
//	         (the payload is encrypted); no other bit is set
//	encrypted (flagAESGCM):
//	  keyID  uvarint length, then the ID of the key that wrote it
//	  nonce  12 random bytes
//	  sealed AES-256-GCM of the payload (its 16-byte tag last), with the
//	         additional data below
//	plain (no flagAESGCM):
//	  payload
//	payload  flagZstd: uvarint length of the encoding, then one zstd
//	         frame of it; otherwise the encoding itself
//
// The additional authenticated data of an encrypted record is its bytes
// up to the nonce (magic, flags, key ID) and the resource's namespace,
// type (each as uvarint length, bytes) and ID: a record copied under
// another resource's key, or with any byte of its header changed, fails
// authentication.
var magic = [4]byte{'r', 'g', 's', 1}

const (
	flagZstd   byte = 1 << 0
	flagAESGCM byte = 1 << 1
	knownFlags      = flagZstd | flagAESGCM

	headerLen = len(magic) + 1
	nonceLen  = 12
	tagLen    = 16
)

// maxPlainLen bounds the length a compressed payload may announce.
const maxPlainLen = 1 << 30

// frame is a parsed record.
type frame struct {
	flags byte
	keyID string
	// head is the record up to the nonce, nonce and body its nonce and
	// sealed payload (encrypted); or body is the payload (plain).
	head, nonce, body []byte
	// framed is false for a record that is a resource's encoding as is.
	framed bool
}

var errTruncated = errors.New("truncated")

// parse splits a record into its parts without opening it.
func parse(rec []byte) (frame, error) {
	if len(rec) < len(magic) || [3]byte(rec[:3]) != [3]byte(magic[:3]) {
		return frame{body: rec}, nil // a resource's encoding as is
	}
	if rec[3] != magic[3] {
		return frame{}, fmt.Errorf("format version %d; this version reads 1", rec[3])
	}
	if len(rec) < headerLen {
		return frame{}, errTruncated
	}
	f := frame{flags: rec[4], framed: true}
	if f.flags&^knownFlags != 0 {
		return frame{}, errors.New("unknown flags")
	}
	rest := rec[headerLen:]
	if f.flags&flagAESGCM == 0 {
		f.body = rest
		return f, nil
	}
	n, w := binary.Uvarint(rest)
	if w <= 0 || n == 0 || n > maxKeyIDLen || uint64(len(rest)-w) < n+nonceLen+tagLen {
		return frame{}, errTruncated
	}
	f.keyID = string(rest[w : w+int(n)])
	head := headerLen + w + int(n)
	f.head, f.nonce, f.body = rec[:head], rec[head:head+nonceLen], rec[head+nonceLen:]
	return f, nil
}

// appendAAD appends the additional authenticated data of an encrypted
// record whose bytes up to the nonce are head, of the resource ns/typ/id.
func appendAAD(dst, head []byte, ns, typ, id string) []byte {
	dst = append(dst, head...)
	dst = appendString(dst, ns)
	dst = appendString(dst, typ)
	return append(dst, id...)
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Framed reports whether rec is a framed record (compressed or
// encrypted), not a resource's encoding as is: a store that seals
// nothing may take a record that is not framed as the encoding itself.
func Framed(rec []byte) bool {
	return len(rec) >= 3 && [3]byte(rec[:3]) == [3]byte(magic[:3])
}
