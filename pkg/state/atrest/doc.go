// Package atrest is what resgraph's backends that keep resources outside
// the process (the bbolt file of pkg/state/inmem/boltdb, the etcd state of
// pkg/state/etcd) do to each stored record: compress it with zstd above a
// size threshold, and encrypt it with AES-256-GCM (rules P2 and P3). It is
// a module of its own, shared by those two, so that the core module does
// not depend on the zstd library.
//
//	sealer, err := atrest.New(ctx, atrest.Config{
//		Keys:          atrest.KeysFromFile("/etc/mydaemon/state.keys"),
//		CompressAbove: atrest.DefaultCompressAbove,
//	})
//	st, err := boltdb.Open(path, reg, boltdb.WithSealer(sealer))
//
// # Records
//
// A record is the resource's encoding (pkg/resource/codec) as the store
// keeps it. Without encryption and below the compression threshold it is
// the encoding itself, as stores wrote before this package: old records
// read on. Otherwise it is framed (see format.go): a flag per record says
// whether it is compressed and whether it is encrypted, so records of
// every kind read side by side, and a change of the threshold or of the
// keys needs no rewrite of what is stored.
//
// An encrypted record carries the ID of the key that wrote it and a fresh
// random 96-bit nonce; its header (flags, key ID) and the resource's
// namespace, type and ID are its additional authenticated data. So a
// record decrypts only as the record of its own resource, under the key
// that wrote it (rule P2): one copied under another resource's key, or
// with any byte changed, truncated, or under another key ID, fails with a
// [*RecordError] naming the resource and the key ID, never a wrong or
// partial resource ([Sealer.Open]). Random nonces are safe for about 2^32
// records per key: rotate well before.
//
// # Keys
//
// Keys come from a [KeyProvider]: a file ([KeysFromFile]), an environment
// variable ([KeysFromEnv]), or a function ([KeyFunc]), in a list whose
// first key writes and whose every key reads. The list is checked when
// the Sealer is made ([New]) and reloaded ([Sealer.LoadKeys]): no key, a key
// that is not 32 bytes, two keys with one ID and a bad ID are each a
// [*KeyError] naming the key ID (never its bytes). A store keeps a key
// check per key ID it wrote with ([KeySet.KeyCheck]), so that when it
// opens, a key given under a known ID but not the one that wrote
// ([ErrWrongKey]) and a key the store's records need but the provider
// lacks ([ErrKeyMissing]) are refused naming the ID, before anything is
// read or written. Nothing is ever written with a key the provider does
// not give (only the first key of the current list writes), nor with a
// key whose check the store does not keep yet (a store keeps the check of
// new keys before it uses them, [Sealer.Use]).
//
// # Rotation
//
// To rotate, put the new key first in the provider's list, keeping the
// old ones, and ask the store to rotate (boltdb's State.Rotate, etcd's
// Rotate): it reloads the keys, and rewrites every record not under the
// first key ([Sealer.Stale], [Sealer.Reseal]) in bounded batches, while
// the store serves reads and writes. Every record is readable at every
// moment of it (under its old key or the new one), so it is safe to
// interrupt; it resumes where it stopped. A rotation when every record is
// already under the first key is refused with [ErrNoNewKey]. Once it is
// done, the old keys may leave the list.
//
// A store that was written without encryption is encrypted the same way:
// give it keys and [Config.ReadPlaintext], and rotate. Without
// ReadPlaintext, a store that encrypts refuses a record that is not
// encrypted ([ErrPlaintext]): it was not written with the store's keys.
//
// # Strict and lenient
//
// When a store opens, a record that does not open (it fails
// authentication, is malformed, or is plaintext where the store encrypts)
// refuses the store in the default, strict mode: the error names the
// record's resource and key ID, and nothing is written. In lenient mode
// ([Config.Lenient]) the store opens without such records, as if they
// were absent, and gives each error to [Config.Report]; a later write of
// the resource replaces the record. A missing or wrong key refuses the
// store in both modes.
//
// # Compression
//
// A record whose encoding is longer than [Config.CompressAbove] bytes is
// compressed with zstd at its fastest level (before encryption), and kept
// so only when that makes it shorter; a compressed payload announces its
// length and must decompress to exactly that. See docs/performance.md for
// what compression and encryption cost per write and save on disk.
package atrest
