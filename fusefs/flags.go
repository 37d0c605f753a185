package fusefs

import (
	"context"
	"encoding/binary"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

// Inode flags through ioctls (chattr, lsattr, xfs_io chattr): the
// kernel turns FS_IOC_GETFLAGS/SETFLAGS and FS_IOC_FSGETXATTR/FSSETXATTR
// into FUSE_IOCTL on an open handle, after its own check of who may set
// them. The store keeps and enforces them (store/flags.go).

// The fsxattr ioctls, built as the kernel's _IOR/_IOW('X', 31/32, struct
// fsxattr) are for this architecture (x/sys has the flags ioctls only).
const (
	ioDirMask       = 0xe0000000 // the direction bits, where every Linux puts them
	fsxattrSize     = 28
	iocFSGetXattr   = uint32(unix.FS_IOC_GETFLAGS)&ioDirMask | fsxattrSize<<16 | 'X'<<8 | 31
	iocFSSetXattr   = uint32(unix.FS_IOC_SETFLAGS)&ioDirMask | fsxattrSize<<16 | 'X'<<8 | 32
	xflagImmutable  = 0x8  // FS_XFLAG_IMMUTABLE
	xflagAppend     = 0x10 // FS_XFLAG_APPEND
	flagsSupported  = store.FlagImmutable | store.FlagAppend
	xflagsSupported = xflagImmutable | xflagAppend
)

func (n *node) Ioctl(ctx context.Context, fh fs.FileHandle, cmd uint32, arg uint64, input []byte, output []byte) (int32, syscall.Errno) {
	switch cmd {
	case uint32(unix.FS_IOC_GETFLAGS), iocFSGetXattr:
		i, err := n.fsys.st.Attr(n.ino)
		if err != nil {
			return 0, errno(err)
		}
		if cmd == iocFSGetXattr {
			if len(output) < fsxattrSize {
				return 0, syscall.EINVAL
			}
			clear(output)
			binary.NativeEndian.PutUint32(output, toXflags(i.Flags))
			return 0, 0
		}
		if len(output) < 4 {
			return 0, syscall.EINVAL
		}
		binary.NativeEndian.PutUint32(output, i.Flags&flagsSupported)
		return 0, 0
	case uint32(unix.FS_IOC_SETFLAGS), iocFSSetXattr:
		if n.fsys.readOnly {
			return 0, syscall.EROFS
		}
		var flags uint32
		if cmd == iocFSSetXattr {
			if len(input) < fsxattrSize {
				return 0, syscall.EINVAL
			}
			x := binary.NativeEndian.Uint32(input)
			for _, v := range input[4:20] { // extent sizes, project id
				if v != 0 {
					return 0, syscall.EOPNOTSUPP
				}
			}
			if x&^xflagsSupported != 0 {
				return 0, syscall.EOPNOTSUPP
			}
			flags = fromXflags(x)
		} else {
			if len(input) < 4 {
				return 0, syscall.EINVAL
			}
			flags = binary.NativeEndian.Uint32(input)
		}
		_, err := n.fsys.st.SetFlags(n.ino, flags)
		return 0, errno(err)
	}
	return 0, syscall.ENOTTY
}

func toXflags(f uint32) uint32 {
	var x uint32
	if f&store.FlagImmutable != 0 {
		x |= xflagImmutable
	}
	if f&store.FlagAppend != 0 {
		x |= xflagAppend
	}
	return x
}

func fromXflags(x uint32) uint32 {
	var f uint32
	if x&xflagImmutable != 0 {
		f |= store.FlagImmutable
	}
	if x&xflagAppend != 0 {
		f |= store.FlagAppend
	}
	return f
}
