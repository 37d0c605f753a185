package fusefs

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
)

// The generated attributes (user.mnemofs.*) are read by name, and listed
// only to a program that asks for them: one whose command line names
// their prefix (getfattr -d -m user.mnemofs FILE). Every other listing
// leaves them out, so that cp -a, rsync -X, tar --xattrs and the like
// never copy them onto another disk, where they would be frozen, or back
// onto a memory, which refuses them. The kernel names the calling
// thread; its /proc entry holds the command line of its process.

// asksSystemXattrs reports whether the caller of ctx named the prefix of
// the generated attributes among its arguments.
func asksSystemXattrs(ctx context.Context) bool {
	c, ok := fuse.FromContext(ctx)
	if !ok || c.Pid == 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(c.Pid), 10) + "/cmdline")
	if err != nil {
		return false
	}
	args := bytes.Split(b, []byte{0})
	if len(args) > 0 {
		args = args[1:] // the program itself
	}
	prefix := []byte(store.SystemXattrPrefix[:len(store.SystemXattrPrefix)-1]) // user.mnemofs
	quoted := []byte(`user\.mnemofs`)                                          // as a regular expression
	for _, a := range args {
		if bytes.Contains(a, prefix) || bytes.Contains(a, quoted) {
			return true
		}
	}
	return false
}

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	// Only regular files have generated attributes.
	system := n.StableAttr().Mode&syscall.S_IFMT == syscall.S_IFREG && asksSystemXattrs(ctx)
	names, err := n.fsys.st.ListXattr(n.ino, system)
	if err != nil {
		return 0, errno(err)
	}
	size := 0
	for _, s := range names {
		size += len(s) + 1
	}
	if len(dest) < size {
		return uint32(size), syscall.ERANGE
	}
	b := dest[:0]
	for _, s := range names {
		b = append(b, s...)
		b = append(b, 0)
	}
	return uint32(size), 0
}
