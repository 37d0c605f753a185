// Package pack is how a store keeps archived small files compressed: the
// pack format (a uvarint of the raw size, then zstd of the members'
// bytes, one after another), a cache of decompressed packs, the reading
// of a member's bytes, and the packer that groups the files of a tree
// into packs.
//
// Invariants:
//   - A pack never changes once written: the cache needs no
//     invalidation, only forgetting a pack that was deleted.
//   - A member is a regular file with one link, closed, within one chunk
//     of the KV; it is packed in one transaction that writes the pack,
//     its membership key, its inode (pointing at the pack and its offset)
//     and deletes its chunk, and only if it is unchanged since it was
//     read (Host.Write, under the store's namespace lock).
//   - A pack is deleted with its last member (DropIfEmpty).
//
// The store unpacks a member before its first write or truncate (it
// changes the inode), so nothing that writes ever sees a pack.
package pack
