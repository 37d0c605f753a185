// Package blobfs keeps the content of large files as plain files beside
// the KV, one per inode and generation, and orders their durability with
// the KV's (the barrier: no record may become durable before the data it
// points at). It knows nothing of inodes beyond their numbers; the store
// decides which generation a file's content is in.
package blobfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Blob files hold the content of files larger than one chunk, beside the KV
// (Options.BlobDir): a sequential write or an append is then one pwrite into
// the page cache instead of a copy through Badger's value log, and a large
// file is read with pread. Small files (up to ChunkSize) stay in the KV.
//
// A blob is named by its inode and a generation, <dir>/<ino%256>/<ino>-<gen>;
// Inode.Blob holds the committed generation (0: the content is in KV chunks).
// Bytes past the committed size are not part of the file, so appends write
// into the committed blob in place; any change to committed bytes (an
// overwrite, a truncation below the committed size) first copies the blob to
// the next generation (copy on write), so the committed content stays whole
// until the commit that points the inode at the new one. Replaced
// generations, and the blobs of removed files, are deleted after the next
// Sync of the KV (a crash before it may still point at them; the store
// syncs within seconds when some wait). Generations no inode points to (a crash between
// a copy and its commit) are deleted when the store opens and by fsck.
type Dir struct {
	dir string

	mu sync.Mutex
	// stale are replaced generations, deleted after the next KV sync;
	// retiring counts each of them until its file is gone, so that no
	// new blob takes its name meanwhile (NextGen).
	stale    []ID
	retiring map[ID]int
	// fresh are inodes with a blob created since their last fsync: its
	// name is not durable until the shard directory is synced. The value
	// is freshSeq at the creation (an entry goes only if not renewed).
	fresh    map[uint64]uint64
	freshSeq uint64
	// temps are empty unnamed files for passthrough sessions: making one
	// costs ext4 ~0.2 ms of CPU, so a session that ends without naming
	// its file gives it back (tempsMax at most).
	temps []*os.File
	// dirty are generations a commit pointed at since their data was
	// last synced; barrier orders those commits with the periodic sync
	// (durable.go).
	dirty   map[ID]bool
	barrier sync.RWMutex
	// keeps counts the Keeps not yet released: while there is one,
	// Synced deletes nothing (a backup is reading the generations its
	// snapshot of the KV points at).
	keeps int
	// held counts the descriptors kept open past a request, the spare
	// temps among them; heldMax bounds it (held.go). Guarded by mu.
	held, heldMax int
}

// Keep keeps every generation on disk, as it is, until the returned func
// is called: retired ones are deleted by the first Synced after that, and
// meanwhile the store changes no committed generation in place (Keeping).
func (b *Dir) Keep() (release func()) {
	b.mu.Lock()
	b.keeps++
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			b.keeps--
			b.mu.Unlock()
		})
	}
}

// Keeping reports whether a Keep is in force.
func (b *Dir) Keeping() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.keeps > 0
}

const tempsMax = 1024

// TakeTemp returns an empty unnamed file, a held descriptor (held.go):
// given back with GiveTemp.
func (b *Dir) TakeTemp() (*os.File, error) {
	b.mu.Lock()
	if n := len(b.temps); n > 0 {
		f := b.temps[n-1]
		b.temps = b.temps[:n-1]
		b.mu.Unlock()
		return f, nil // held already
	}
	b.mu.Unlock()
	if err := b.HoldSpare(); err != nil {
		return nil, err
	}
	f, err := b.createTemp()
	if err != nil {
		b.Unhold()
	}
	return f, err
}

// GiveTemp takes back an unnamed file no one uses any more, and its
// held descriptor.
func (b *Dir) GiveTemp(f *os.File) {
	if emptyTemp(f) == nil {
		b.mu.Lock()
		if len(b.temps) < tempsMax {
			b.temps = append(b.temps, f)
			f = nil
		}
		b.mu.Unlock()
	}
	if f != nil {
		f.Close()
		b.Unhold()
	}
}

// emptyTemp truncates f to zero through a second open of it, closed at
// once. ext4 (auto_da_alloc) and XFS mark a file truncated to zero so that
// the next close of it starts writeback of what was written since — a
// guard for programs that rewrite a file in place without fsync. Reused,
// that close would be the kernel's close of the next passthrough session,
// in the writer's close(2): disk I/O for content that a commit copies to
// the KV store and truncates away. The close here takes the mark while the
// file is empty. (Without /proc: a plain truncation.)
func emptyTemp(f *os.File) error {
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.O_RDWR|unix.O_TRUNC|unix.O_CLOEXEC, 0)
	if err != nil {
		return f.Truncate(0)
	}
	return unix.Close(fd)
}

// closeTemps closes the spare unnamed files.
func (b *Dir) CloseTemps() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.temps {
		f.Close()
		b.held--
	}
	b.temps = nil
}

// ID names a blob: its inode and generation.
type ID struct{ Ino, Gen uint64 }

func (b *Dir) Path(ino, gen uint64) string {
	return filepath.Join(b.dir, fmt.Sprintf("%02x", ino%256), strconv.FormatUint(ino, 10)+"-"+strconv.FormatUint(gen, 10))
}

// create makes an empty blob (replacing a leftover of an earlier crash).
func (b *Dir) Create(ino, gen uint64) (*os.File, error) {
	p := b.Path(ino, gen)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			f, err = os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
		}
	}
	return f, err
}

// createTemp makes an unnamed content file (O_TMPFILE) for a passthrough
// session: it vanishes when closed unless link names it first.
func (b *Dir) createTemp() (*os.File, error) {
	fd, err := unix.Open(b.dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ENOENT) {
		if err = os.MkdirAll(b.dir, 0o700); err == nil {
			fd, err = unix.Open(b.dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open O_TMPFILE", Path: b.dir, Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(b.dir, "(unnamed)")), nil
}

// link names an unnamed content file as generation gen of ino.
func (b *Dir) Link(f *os.File, ino, gen uint64) error {
	p := b.Path(ino, gen)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	os.Remove(p) // a leftover of a crash
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, p, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: p, Err: err}
	}
	b.Created(ino)
	return nil
}

func (b *Dir) Open(ino, gen uint64) (*os.File, error) {
	// unix.Open and os.NewFile: os.OpenFile's fstat and poller checks
	// cost as much as the open on every append.
	p := b.Path(ino, gen)
	fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, fmt.Errorf("store: content file of inode %d (generation %d) is missing", ino, gen)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// created notes a new blob of ino whose name is not yet durable.
func (b *Dir) Created(ino uint64) {
	b.mu.Lock()
	if b.fresh == nil {
		b.fresh = map[uint64]uint64{}
	}
	b.freshSeq++
	b.fresh[ino] = b.freshSeq
	b.mu.Unlock()
}

// retire queues a replaced generation for deletion after the next sync.
func (b *Dir) Retire(ino, gen uint64) {
	b.mu.Lock()
	b.retireLocked(ID{Ino: ino, Gen: gen})
	b.mu.Unlock()
}

func (b *Dir) retireLocked(id ID) {
	if b.retiring == nil {
		b.retiring = map[ID]int{}
	}
	b.stale = append(b.stale, id)
	b.retiring[id]++
}

// NextGen is the generation a new blob of ino takes after generation
// after: the next one no retired blob still holds. A generation retired
// and not yet deleted may be what the durable KV points at until the
// next sync, and that sync deletes its file: a new blob under its name
// would be lost, or, after a crash, read as the old content.
func (b *Dir) NextGen(ino, after uint64) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := after + 1
	for b.retiring[ID{Ino: ino, Gen: g}] > 0 {
		g++
	}
	return g
}

func (b *Dir) RemoveGen(ino, gen uint64) { os.Remove(b.Path(ino, gen)) }

// retireAll queues every generation of ino (the inode is gone) for
// deletion after the next sync.
func (b *Dir) RetireAll(ino uint64) {
	matches, _ := filepath.Glob(filepath.Join(b.dir, fmt.Sprintf("%02x", ino%256), strconv.FormatUint(ino, 10)+"-*"))
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.fresh, ino)
	for _, m := range matches {
		if _, g, ok := strings.Cut(filepath.Base(m), "-"); ok {
			if gen, err := strconv.ParseUint(g, 10, 64); err == nil {
				b.retireLocked(ID{Ino: ino, Gen: gen})
			}
		}
	}
}

// size is the bytes the blob files take on disk (0 without a blob dir).
func (b *Dir) Size() int64 {
	if b == nil {
		return 0
	}
	var n int64
	filepath.WalkDir(b.dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += st.Blocks * 512
				}
			}
		}
		return nil
	})
	return n
}

// list returns every blob on disk.
func (b *Dir) List() ([]ID, error) {
	shards, err := os.ReadDir(b.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []ID
	for _, sh := range shards {
		ents, err := os.ReadDir(filepath.Join(b.dir, sh.Name()))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			a, g, ok := strings.Cut(e.Name(), "-")
			ino, err1 := strconv.ParseUint(a, 10, 64)
			gen, err2 := strconv.ParseUint(g, 10, 64)
			if ok && err1 == nil && err2 == nil {
				ids = append(ids, ID{Ino: ino, Gen: gen})
			}
		}
	}
	return ids, nil
}

// copyRange copies n bytes from the start of src to the start of dst,
// in the kernel where it can.
func CopyRange(dst, src *os.File, n int64) error {
	var off, doff int64
	for off < n {
		c, err := unix.CopyFileRange(int(src.Fd()), &off, int(dst.Fd()), &doff, int(n-off), 0)
		if err != nil || c == 0 {
			if err == nil || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
				_, err = io.Copy(io.NewOffsetWriter(dst, doff), io.NewSectionReader(src, off, n-off))
			}
			return err
		}
	}
	return nil
}

// readBlob reads [off, off+len(dest)) of a blob; bytes past its end read
// as zeros (a file extended by truncate).
func ReadFull(f *os.File, dest []byte, off uint64) error {
	n, err := f.ReadAt(dest, int64(off))
	if errors.Is(err, io.EOF) {
		err = nil
	}
	clear(dest[n:])
	return err
}

// New returns the blob directory dir (created when first needed).
func New(dir string) *Dir { return &Dir{dir: dir} }

// SetFlags sets the immutable and append-only inode flags of f to those
// of flags (FS_IMMUTABLE_FL, FS_APPEND_FL), keeping its others.
func SetFlags(f *os.File, flags uint32) error {
	const ia = 0x10 | 0x20
	old, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	if old&ia == flags&ia {
		return nil
	}
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(old&^ia|flags&ia))
}
