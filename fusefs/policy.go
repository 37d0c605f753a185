package fusefs

import (
	"context"
	"errors"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/policy"
)

// policyFile is meta/policy.yaml: the stored policy, or the defaults when
// none was written. It is the one writable file under meta/, and only for
// the store's operator: in a mount without --user and not read-only, by
// the mount's owner (or root). A --user mount shows it read-only (0444):
// the policy is store-wide, and a confined agent must not change what
// happens to everyone's memories (SECURITY.md). What is written is checked
// when the file is closed (or fsynced) and stored only when it parses;
// otherwise the close fails with EINVAL, the mount logs why, and the old
// policy stays.
type policyFile struct {
	fs.Inode
	fsys *FS

	// writers are the handles open for writing: a truncate without a
	// handle (O_TRUNC arrives as one after the open) cuts their buffers.
	mu      sync.Mutex
	writers map[*policyHandle]bool
}

// current is the policy file's content.
func (p *policyFile) current() ([]byte, error) {
	b, err := p.fsys.st.PolicyBytes()
	if err != nil || len(b) > 0 {
		return b, err
	}
	// Never written, or emptied: the defaults (an empty policy means them).
	return policy.Marshal(policy.Default()), nil
}

func (p *policyFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Ino = p.StableAttr().Ino
	out.Mode = syscall.S_IFREG | p.fsys.policyMode()
	out.Nlink = 1
	out.Uid, out.Gid = uint32(syscall.Getuid()), uint32(syscall.Getgid())
	setGenTimes(&out.Attr)
	if h, ok := fh.(*policyHandle); ok {
		h.mu.Lock()
		out.Size = uint64(len(h.data))
		h.mu.Unlock()
	} else if b, err := p.current(); err == nil {
		out.Size = uint64(len(b))
	}
	out.SetTimeout(uncached)
	return 0
}

func (p *policyFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0
	if write {
		if err := p.fsys.mayWritePolicy(ctx); err != 0 {
			return nil, 0, err
		}
	}
	h := &policyHandle{p: p, writable: write}
	if !write || flags&syscall.O_TRUNC == 0 {
		b, err := p.current()
		if err != nil {
			return nil, 0, errno(err)
		}
		h.data = b
	}
	h.dirty = write && flags&syscall.O_TRUNC != 0
	if write {
		p.mu.Lock()
		if p.writers == nil {
			p.writers = map[*policyHandle]bool{}
		}
		p.writers[h] = true
		p.mu.Unlock()
	}
	return h, fuse.FOPEN_DIRECT_IO, 0
}

func (p *policyFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if err := p.fsys.mayWritePolicy(ctx); err != 0 {
		return err
	}
	if size, ok := in.GetSize(); ok {
		h, isOurs := fh.(*policyHandle)
		p.mu.Lock()
		var writers []*policyHandle
		for w := range p.writers {
			writers = append(writers, w)
		}
		p.mu.Unlock()
		switch {
		case isOurs && h.writable:
			h.truncate(size)
		case len(writers) > 0:
			for _, w := range writers {
				w.truncate(size)
			}
		case size == 0:
			// truncate -s 0 without an open file: back to the defaults.
			if err := p.fsys.st.SetPolicy(nil); err != nil {
				return errno(err)
			}
		default:
			return syscall.EINVAL
		}
	}
	return p.Getattr(ctx, fh, out)
}

// policyHandle is one open of meta/policy.yaml: a snapshot to read, or a
// buffer being written.
type policyHandle struct {
	p        *policyFile
	writable bool

	mu    sync.Mutex
	data  []byte
	dirty bool
}

func (h *policyHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// A copy: the reply is sent after the lock is released, and a write
	// may change data in place meanwhile.
	return fuse.ReadResultData(append([]byte(nil), bytesAt(h.data, dest, off)...)), 0
}

// policyMax bounds the file: a policy is a few hundred bytes.
const policyMax = 1 << 20

func (h *policyHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if !h.writable {
		return 0, syscall.EBADF
	}
	if off < 0 || off+int64(len(data)) > policyMax {
		return 0, syscall.EFBIG
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if end := int(off) + len(data); end > len(h.data) {
		h.data = append(h.data, make([]byte, end-len(h.data))...)
	}
	copy(h.data[off:], data)
	h.dirty = true
	return uint32(len(data)), 0
}

func (h *policyHandle) truncate(size uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if size > policyMax {
		size = policyMax
	}
	if int(size) < len(h.data) {
		h.data = h.data[:size]
	} else {
		h.data = append(h.data, make([]byte, int(size)-len(h.data))...)
	}
	h.dirty = true
}

// Flush stores what was written if it is a valid policy.
func (h *policyHandle) Flush(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.dirty {
		return 0
	}
	if err := h.p.fsys.st.SetPolicy(h.data); err != nil {
		var e syscall.Errno
		if errors.As(err, &e) {
			return e
		}
		h.p.fsys.logf("meta/policy.yaml refused, the old policy stays: %v", err)
		return syscall.EINVAL
	}
	h.dirty = false
	return 0
}

func (h *policyHandle) Fsync(ctx context.Context, flags uint32) syscall.Errno { return h.Flush(ctx) }

// Release forgets a writer.
func (h *policyHandle) Release(ctx context.Context) syscall.Errno {
	h.p.mu.Lock()
	delete(h.p.writers, h)
	h.p.mu.Unlock()
	return 0
}

// policyChild makes the meta/policy.yaml node.
func (m *metaDir) policyChild(ctx context.Context, out *fuse.EntryOut) *fs.Inode {
	f := &policyFile{fsys: m.fsys}
	ino := synthIno("/meta/policy.yaml")
	out.Ino = ino
	out.Mode = syscall.S_IFREG | m.fsys.policyMode()
	out.Nlink = 1
	setGenTimes(&out.Attr)
	out.SetEntryTimeout(uncached)
	out.SetAttrTimeout(uncached)
	return m.NewInode(ctx, f, fs.StableAttr{Mode: syscall.S_IFREG, Ino: ino})
}

// policyMode is meta/policy.yaml's permission bits: writable by the owner
// only where the operator may change it.
func (f *FS) policyMode() uint32 {
	if f.readOnly || f.st.User() != "" {
		return 0o444
	}
	return 0o644
}

// mayWritePolicy refuses a change of the policy to anyone but the
// operator: EROFS on a read-only mount, EACCES in a --user mount or for a
// caller other than the mount's owner and root.
func (f *FS) mayWritePolicy(ctx context.Context) syscall.Errno {
	if f.readOnly {
		return syscall.EROFS
	}
	if f.st.User() != "" {
		f.logf("meta/policy.yaml: refused a change in a mount for user %s (the policy is the operator's: 'mnemofs policy set')", f.st.User())
		return syscall.EACCES
	}
	if c, ok := fuse.FromContext(ctx); ok && c.Uid != 0 && c.Uid != f.ownerUid {
		return syscall.EACCES
	}
	return 0
}
