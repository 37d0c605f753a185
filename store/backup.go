package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store/changes"
	"github.com/mnemofs/mnemofs/store/internal/blobfs"
)

// Backups (package backup writes and reads the file). A dump is every key
// and value of the KV as of one snapshot, in key order, then the content
// of each blob file that snapshot's inodes point at. Loaded into an empty
// KV and blob directory it is the store as it was at that moment, as a
// crash then would have left it: a file closed before the dump began is
// in it whole, and one being written is as its last commit left it.

// Dump calls key for every key and value of the store as of one snapshot
// (the slices only valid during the call), then blob for the content of
// each large file kept in a blob file then: its inode, the generation,
// the length of its content, and the file, open read-only. The length is
// the committed size, except for a file the kernel wrote in place
// (passthrough, a live mark): its file as it is, which a start adopts.
// No blob file is deleted while Dump runs.
func (s *Store) Dump(key func(k, v []byte) error, blob func(ino, gen uint64, size int64, f *os.File) error) error {
	if s.blobs != nil {
		defer s.blobs.Keep()() // before the snapshot: nothing it points at goes
	}
	type ref struct{ ino, gen, size uint64 }
	var refs []ref
	live := map[uint64]bool{}
	err := s.kv.View(func(t backend.Txn) error {
		var ferr error
		err := backend.ScanRef(t, nil, nil, func(k, v []byte) bool {
			if ferr = key(k, v); ferr != nil {
				return false
			}
			switch {
			case k[0] == backend.PrefixInode && len(k) == 9:
				i, err := decodeInode(v)
				if err != nil {
					ferr = fmt.Errorf("store: inode %d: %w", backend.KeyIno(k), err)
					return false
				}
				if i.IsReg() && i.Blob != 0 {
					refs = append(refs, ref{backend.KeyIno(k), i.Blob, i.Size})
				}
			case k[0] == backend.PrefixLive && len(k) == 9:
				live[backend.KeyIno(k)] = true
			}
			return true
		})
		return errors.Join(ferr, err)
	})
	if err != nil {
		return err
	}
	if len(refs) > 0 && s.blobs == nil {
		return errors.New("store: inodes point at blob files, but the store has no blob directory")
	}
	for _, r := range refs {
		f, err := s.blobs.Open(r.ino, r.gen)
		if err != nil {
			return err
		}
		size := int64(r.size)
		if live[r.ino] {
			if fi, err := f.Stat(); err == nil {
				size = fi.Size()
			}
		}
		err = blob(r.ino, r.gen, size, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Loader writes a dump into a new store: an empty KV and, beside it, the
// blob directory.
type Loader struct {
	batch backend.Batch
	blobs *blobfs.Dir
}

// NewLoader loads into kv (which must hold no store) and blobDir ("": a
// dump with blobs is refused).
func NewLoader(kv backend.KV, blobDir string) *Loader {
	l := &Loader{batch: kv.NewBatch()}
	if blobDir != "" {
		l.blobs = blobfs.New(blobDir)
	}
	return l
}

// Key writes one key and value of the dump. Leases are left out (they
// belong to the processes that held them), and so is the mark of a clean
// close, so that the first start finds removals by a walk rather than
// trust a log kept under another KV's versions.
func (l *Loader) Key(k, v []byte) error {
	if bytes.HasPrefix(k, backend.StoreKey("lease/")) || bytes.Equal(k, changes.ClosedKey()) {
		return nil
	}
	return l.batch.Set(bytes.Clone(k), bytes.Clone(v))
}

// Blob writes the content of generation gen of ino's blob file from r.
func (l *Loader) Blob(ino, gen uint64, r io.Reader) error {
	if l.blobs == nil {
		return errors.New("store: the dump holds blob files, and this store keeps none (encrypted, or on etcd)")
	}
	f, err := l.blobs.Create(ino, gen)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// Close commits what was loaded.
func (l *Loader) Close() error { return l.batch.Flush() }

// Cancel drops what was loaded and not yet committed.
func (l *Loader) Cancel() { l.batch.Cancel() }
