package backend

import "encoding/binary"

// The key schema. Every key mnemofs writes is built by one constructor below.
// Integers are 8-byte big-endian (uint64) or 4-byte (uint32) so that prefix
// scans return them in numeric order.
//
//	s<name>                     store-wide values: "s" + "version", "nextino",
//	                            "load" (an import's load under way: the
//	                            inode range it leased, lo:8 hi:8; a start
//	                            that finds it undoes the load,
//	                            store/bulkundo.go),
//	                            "lease/<name>" (store/lease.go: the
//	                            maintenance pass, "host/<id>" presences),
//	                            "setting/<name>" (meta/policy.yaml: "policy"),
//	                            "<journal>/<key>" (store/journals.go; the
//	                            passes of meta/maintenance.log: "maintlog/<time>")
//	i<ino:8>                    inode record (store.Inode binary encoding;
//	                            its Blob field names the generation of the
//	                            blob file holding a large file's content)
//	d<dir:8><name>              directory entry -> child ino:8 + mode:4
//	c<id:8><chunk:4>            file content, chunk N (ChunkSize bytes each,
//	                            the last one may be short), for files whose
//	                            inode has no blob; id is the inode's own
//	                            number, or its Content when a staged
//	                            rewrite wrote it (store/stage.go)
//	g<id:8>                     a chunk set no inode points at (yet): "s" +
//	                            host id while a staged rewrite writes it,
//	                            "x" + unix nanos once its inode moved off
//	                            it (garbage, collected); store/stage.go
//	x<ino:8><name>              user extended attribute value
//	m<ino:8>                    memory metadata (JSON store.Record: front
//	                            matter, hash, version, access, owner, trash)
//	o<ino:8>                    orphan: unlinked while open, content freed
//	                            on last close or at the next start; on a
//	                            shared store its value names the host
//	                            that has it open (store/hosts.go)
//	v<lin:8><n:4>               an old version N of a memory (JSON
//	                            store.Version: size, sha256, times), keyed
//	                            by its lineage: the inode the memory was
//	                            first created as (store/saves.go), which
//	                            atomic saves hand on to the next inode
//	w<lin:8><n:4><chunk:4>      that version's content, ChunkSize chunks
//	n<ino:8>                    successor: a save moved the memory of ino
//	                            on to this inode (ino:8), so links to ino
//	                            follow it
//	p<pack:8>                   a pack: the content of archived small files
//	                            (a session's turns), uvarint raw length +
//	                            zstd of their concatenation; its members'
//	                            inodes name it (Pack, PackOff) and have no
//	                            chunks; "s" + "nextpack" numbers packs
//	q<pack:8><ino:8>            ino is a live member of the pack; the pack
//	                            goes with its last member
//	e<ino:8>                    the embedding of a memory (views/embed.go):
//	                            sha256 of the content it was made from,
//	                            dim, count, then count×dim float32 (LE);
//	                            "s" + "embed/model" names the model
//	r<ino:8>                    removed: ino was removed, written in the
//	                            transaction that deleted its inode record
//	                            (the removal log, store/changes): what
//	                            keeps a derived index finds removals by
//	                            the key's version, without a walk of every
//	                            inode; "s" + "removals/since" is the version
//	                            after which the log is complete, and
//	                            "s" + "removals/closed" is the last write
//	                            of a clean close
//	l<ino:8>                    live: ino's blob was written by the kernel
//	                            (FUSE passthrough, store/passthrough.go)
//	                            after its last commit, or its sha256 is
//	                            still being computed; the store rehashes
//	                            it when the session ends or at the next start
//
// Outside the KV, in the data directory: blobs/<ino%256 as 2 hex>/<ino>-<gen>,
// the content of files larger than one chunk (store/blob.go; never for an
// encrypted store); index/views.snap (index/views-<user hex>.snap), the
// views' catalog and search index as of a KV version (Versioned), derived
// and rebuildable (views/snapshot.go; never for an encrypted store).
//
// A new key family adds its prefix here.
const (
	PrefixStore   = 's'
	PrefixInode   = 'i'
	PrefixDirent  = 'd'
	PrefixChunk   = 'c'
	PrefixXattr   = 'x'
	PrefixMeta    = 'm'
	PrefixOrphan  = 'o'
	PrefixLive    = 'l'
	PrefixVersion = 'v'
	PrefixVBytes  = 'w'
	PrefixPack    = 'p'
	PrefixMember  = 'q'
	PrefixVector  = 'e'
	PrefixSucc    = 'n'
	PrefixStage   = 'g'
	PrefixRemoved = 'r'
	inoLen        = 8
	chunkIndexLen = 4
)

func withIno(p byte, ino uint64, extra int) []byte {
	k := make([]byte, 1+inoLen, 1+inoLen+extra)
	k[0] = p
	binary.BigEndian.PutUint64(k[1:], ino)
	return k
}

// StoreKey is a store-wide value.
func StoreKey(name string) []byte { return append([]byte{PrefixStore}, name...) }

// RemovedKey marks ino as removed (the removal log).
func RemovedKey(ino uint64) []byte { return withIno(PrefixRemoved, ino, 0) }

// InodeKey is the inode record of ino.
func InodeKey(ino uint64) []byte { return withIno(PrefixInode, ino, 0) }

// DirentKey is the entry name in directory dir.
func DirentKey(dir uint64, name string) []byte {
	return append(withIno(PrefixDirent, dir, len(name)), name...)
}

// DirentPrefix covers every entry of directory dir.
func DirentPrefix(dir uint64) []byte { return withIno(PrefixDirent, dir, 0) }

// DirentName returns the name part of a dirent key.
func DirentName(key []byte) string { return string(key[1+inoLen:]) }

// DirentDir returns the directory part of a dirent key.
func DirentDir(key []byte) uint64 { return binary.BigEndian.Uint64(key[1:]) }

// ChunkKey is content chunk idx of ino.
func ChunkKey(ino uint64, idx uint32) []byte {
	k := withIno(PrefixChunk, ino, chunkIndexLen)
	return binary.BigEndian.AppendUint32(k, idx)
}

// ChunkPrefix covers every chunk of ino.
func ChunkPrefix(ino uint64) []byte { return withIno(PrefixChunk, ino, 0) }

// ChunkIndex returns the chunk number of a chunk key.
func ChunkIndex(key []byte) uint32 { return binary.BigEndian.Uint32(key[1+inoLen:]) }

// StageKey marks chunk set id as being written or as garbage.
func StageKey(id uint64) []byte { return withIno(PrefixStage, id, 0) }

// StagePrefix covers every stage marker.
func StagePrefix() []byte { return []byte{PrefixStage} }

// XattrKey is extended attribute name of ino.
func XattrKey(ino uint64, name string) []byte {
	return append(withIno(PrefixXattr, ino, len(name)), name...)
}

// XattrPrefix covers every xattr of ino.
func XattrPrefix(ino uint64) []byte { return withIno(PrefixXattr, ino, 0) }

// XattrName returns the attribute name part of an xattr key.
func XattrName(key []byte) string { return string(key[1+inoLen:]) }

// MetaKey is the memory metadata record of ino.
func MetaKey(ino uint64) []byte { return withIno(PrefixMeta, ino, 0) }

// MetaPrefix covers every metadata record.
func MetaPrefix() []byte { return []byte{PrefixMeta} }

// OrphanKey marks ino as unlinked while open.
func OrphanKey(ino uint64) []byte { return withIno(PrefixOrphan, ino, 0) }

// OrphanPrefix covers every orphan marker.
func OrphanPrefix() []byte { return []byte{PrefixOrphan} }

// LiveKey marks ino's content as possibly ahead of its record.
func LiveKey(ino uint64) []byte { return withIno(PrefixLive, ino, 0) }

// SuccessorKey names the inode a save moved the memory of ino on to.
func SuccessorKey(ino uint64) []byte { return withIno(PrefixSucc, ino, 0) }

// LivePrefix covers every live marker.
func LivePrefix() []byte { return []byte{PrefixLive} }

// KeyIno returns the inode number of any ino-keyed key.
func KeyIno(key []byte) uint64 { return binary.BigEndian.Uint64(key[1:]) }

// VersionKey is the header of old version n of ino.
func VersionKey(ino uint64, n uint32) []byte {
	return binary.BigEndian.AppendUint32(withIno(PrefixVersion, ino, 4), n)
}

// VersionPrefix covers every version header of ino.
func VersionPrefix(ino uint64) []byte { return withIno(PrefixVersion, ino, 0) }

// VersionNumber returns n of a version header key.
func VersionNumber(key []byte) uint32 { return binary.BigEndian.Uint32(key[1+inoLen:]) }

// VersionChunkKey is chunk idx of the content of version n of ino.
func VersionChunkKey(ino uint64, n, idx uint32) []byte {
	k := binary.BigEndian.AppendUint32(withIno(PrefixVBytes, ino, 8), n)
	return binary.BigEndian.AppendUint32(k, idx)
}

// VersionBytesPrefix covers the content of every version of ino.
func VersionBytesPrefix(ino uint64) []byte { return withIno(PrefixVBytes, ino, 0) }

// PackKey is the compressed content of pack id.
func PackKey(id uint64) []byte { return withIno(PrefixPack, id, 0) }

// PackPrefix covers every pack.
func PackPrefix() []byte { return []byte{PrefixPack} }

// MemberKey marks ino as a live member of pack id.
func MemberKey(id, ino uint64) []byte {
	return binary.BigEndian.AppendUint64(withIno(PrefixMember, id, 8), ino)
}

// MemberPrefix covers the members of pack id.
func MemberPrefix(id uint64) []byte { return withIno(PrefixMember, id, 0) }

// AllMembersPrefix covers the members of every pack.
func AllMembersPrefix() []byte { return []byte{PrefixMember} }

// MemberIno returns the ino part of a member key.
func MemberIno(key []byte) uint64 { return binary.BigEndian.Uint64(key[1+inoLen:]) }

// VectorKey is the embedding of memory ino.
func VectorKey(ino uint64) []byte { return withIno(PrefixVector, ino, 0) }

// VectorPrefix covers every embedding.
func VectorPrefix() []byte { return []byte{PrefixVector} }
