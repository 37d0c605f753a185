// Package backup writes and reads the file of 'mnemofs backup': a dump of
// a store (store.Dump: every key and value of one snapshot of the KV, then
// the content of the blob files it points at), compressed, checksummed
// and, for an encrypted store, encrypted with the store's key.
//
// The file:
//
//	"MNEMOFS-BACKUP\n"          magic
//	Header as one line of JSON  in the clear: formats, time, source, and
//	                            for an encrypted store the key's
//	                            derivation (not secret) and a salt
//	body                        zstd of the records; for an encrypted
//	                            store, that stream sealed in frames
//
// Records, each a kind byte then uvarints and bytes:
//
//	'k' len(key) key len(value) value     one key of the KV
//	'b' ino gen size, size bytes          one blob file's content
//	'e' keys blobs, sha256 (32 bytes)     the end: the counts, and the
//	                                      hash of every byte before the hash
//
// A frame of an encrypted body is a flag byte (1 on the last frame), a
// 4-byte big-endian length and that many bytes of AES-256-GCM output; the
// nonce is the frame's number, the flag byte is authenticated, and the
// frame key is HKDF-SHA256 of the store key with the header's salt. A
// reader accepts the body only once the end record's counts and hash, and
// for an encrypted body the last frame, check out: a cut or changed file
// is refused, never loaded in part.
package backup
