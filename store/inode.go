package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/columns"
)

// RootIno is the inode number of the root directory.
const RootIno = 1

// Link is one name of an inode.
type Link struct {
	Parent uint64
	Name   string
}

// Inode is the persistent attributes of a node.
type Inode struct {
	Ino                        uint64
	Mode                       uint32 // file type and permission bits (syscall.S_IF*)
	Uid, Gid                   uint32
	Rdev                       uint32
	Size                       uint64
	Atime, Mtime, Ctime, Btime int64  // unix nanoseconds
	Subdirs                    uint32 // directories: number of child directories
	Links                      []Link // every name of this inode; directories have one
	Target                     string // symlinks: the target
	Blob                       uint64 // regular files: generation of the blob holding the content; 0: KV chunks
	Xattrs                     uint32 // number of user xattrs
	Pack, PackOff              uint64 // archived small files: the pack holding the content, and where (pack.go); 0: not packed
	Content                    uint64 // regular files: the id whose chunk keys hold the content, set by a staged rewrite (stage.go); 0: Ino
	Flags                      uint32 // FlagImmutable, FlagAppend (chattr; flags.go)

	// legacy: decoded from a record without Blob and Xattrs (written
	// before they existed), so Xattrs is unknown.
	legacy bool
	// base, on a shared store, is the inode an editable copy was made
	// from, as cached then (stale.go).
	base *Inode
}

// IsDir reports whether the inode is a directory.
func (i *Inode) IsDir() bool { return i.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// IsReg reports whether the inode is a regular file.
func (i *Inode) IsReg() bool { return i.Mode&syscall.S_IFMT == syscall.S_IFREG }

// Nlink is the POSIX link count.
func (i *Inode) Nlink() uint32 {
	if i.IsDir() {
		return 2 + i.Subdirs
	}
	return uint32(len(i.Links))
}

// chunkID is the id of i's content chunks (backend.ChunkKey). Caller
// holds icMu for a cached inode.
func (i *Inode) chunkID() uint64 {
	if i.Content != 0 {
		return i.Content
	}
	return i.Ino
}

func (i *Inode) clone() *Inode {
	c := *i
	c.Links = append([]Link(nil), i.Links...)
	return &c
}

func (i *Inode) addLink(parent uint64, name string) {
	i.Links = append(i.Links, Link{parent, name})
}

func (i *Inode) dropLink(parent uint64, name string) {
	for k, l := range i.Links {
		if l.Parent == parent && l.Name == name {
			i.Links = append(i.Links[:k], i.Links[k+1:]...)
			return
		}
	}
}

const inodeFormat = 1

func (i *Inode) encode() []byte {
	b := make([]byte, 0, 96+len(i.Target)+16*len(i.Links))
	b = append(b, inodeFormat)
	for _, v := range []uint64{i.Ino, uint64(i.Mode), uint64(i.Uid), uint64(i.Gid), uint64(i.Rdev), i.Size, uint64(i.Subdirs)} {
		b = binary.AppendUvarint(b, v)
	}
	for _, v := range []int64{i.Atime, i.Mtime, i.Ctime, i.Btime} {
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(i.Links)))
	for _, l := range i.Links {
		b = binary.AppendUvarint(b, l.Parent)
		b = binary.AppendUvarint(b, uint64(len(l.Name)))
		b = append(b, l.Name...)
	}
	b = binary.AppendUvarint(b, uint64(len(i.Target)))
	b = append(b, i.Target...)
	// Trailing fields added later: records written before them end here.
	b = binary.AppendUvarint(b, i.Blob)
	b = binary.AppendUvarint(b, uint64(i.Xattrs))
	if i.Pack == 0 && i.Content == 0 && i.Flags == 0 {
		return b // records of unpacked files end here, as before packs
	}
	b = binary.AppendUvarint(b, i.Pack)
	b = binary.AppendUvarint(b, i.PackOff)
	if i.Content == 0 && i.Flags == 0 {
		return b // as before staged rewrites
	}
	b = binary.AppendUvarint(b, i.Content)
	if i.Flags == 0 {
		return b // as before flags
	}
	return binary.AppendUvarint(b, uint64(i.Flags))
}

var errCorrupt = errors.New("store: corrupt inode record")

func decodeInode(b []byte) (*Inode, error) {
	if len(b) == 0 || b[0] != inodeFormat {
		return nil, errCorrupt
	}
	d := columns.Varints{B: b[1:]}
	i := &Inode{}
	var mode, uid, gid, rdev, subdirs uint64
	for _, p := range []*uint64{&i.Ino, &mode, &uid, &gid, &rdev, &i.Size, &subdirs} {
		*p = d.Uvarint()
	}
	i.Mode, i.Uid, i.Gid, i.Rdev, i.Subdirs = uint32(mode), uint32(uid), uint32(gid), uint32(rdev), uint32(subdirs)
	for _, p := range []*int64{&i.Atime, &i.Mtime, &i.Ctime, &i.Btime} {
		*p = d.Varint()
	}
	n := d.Uvarint()
	if n > 1<<20 {
		return nil, errCorrupt
	}
	for k := uint64(0); k < n; k++ {
		p := d.Uvarint()
		i.Links = append(i.Links, Link{p, string(d.Bytes())})
	}
	i.Target = string(d.Bytes())
	if len(d.B) > 0 {
		i.Blob = d.Uvarint()
		i.Xattrs = uint32(d.Uvarint())
		if len(d.B) > 0 {
			i.Pack, i.PackOff = d.Uvarint(), d.Uvarint()
		}
		if len(d.B) > 0 {
			i.Content = d.Uvarint()
		}
		if len(d.B) > 0 {
			i.Flags = uint32(d.Uvarint())
		}
	} else {
		i.legacy = true
	}
	if d.Err {
		return nil, fmt.Errorf("%w (ino %d)", errCorrupt, i.Ino)
	}
	return i, nil
}

// dirent value: child ino (8 bytes) + mode (4 bytes).
func encodeDirent(ino uint64, mode uint32) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 12), ino)
	return binary.BigEndian.AppendUint32(b, mode)
}

func decodeDirent(b []byte) (uint64, uint32, error) {
	if len(b) != 12 {
		return 0, 0, errCorrupt
	}
	return binary.BigEndian.Uint64(b), binary.BigEndian.Uint32(b[8:]), nil
}

// allocIno returns a fresh inode number. Caller holds mu. Numbers are
// leased idLease at a time from a counter in the KV, in one transaction:
// on a shared store two hosts' leases conflict and one takes the next
// range, so numbers are unique across hosts with no round trip per create.
func (s *Store) allocIno() (uint64, error) {
	if s.idNext == s.idEnd {
		var hwm uint64
		err := s.kv.Update(func(t backend.Txn) error {
			v, err := t.Get(backend.StoreKey("nextino"))
			if err != nil {
				return err
			}
			if len(v) != 8 {
				return fmt.Errorf("store: corrupt inode counter")
			}
			hwm = binary.BigEndian.Uint64(v)
			return t.Set(backend.StoreKey("nextino"), binary.BigEndian.AppendUint64(nil, hwm+idLease))
		})
		if err != nil {
			return 0, err
		}
		s.idNext, s.idEnd = hwm, hwm+idLease
	}
	s.idNext++
	return s.idNext - 1, nil
}
