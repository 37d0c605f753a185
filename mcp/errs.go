package mcp

import (
	"errors"
	"syscall"
)

// fsErr turns a store error of op on path into a message that says what
// failed and how to go on. Errors are the same for a memory that does not
// exist and one the server's user may not see (the store answers ENOENT
// for both); commands with a documented "does not exist" message check
// for it before they get here.
func (t *Tools) fsErr(op, path string, err error) error {
	var te *toolError
	if errors.As(err, &te) {
		return err
	}
	var e syscall.Errno
	if !errors.As(err, &e) {
		return errorf("cannot %s %s: %v", op, path, err)
	}
	switch e {
	case syscall.ENOENT:
		return errorf("The path %s does not exist", path)
	case syscall.EEXIST:
		return errorf("cannot %s %s: it already exists", op, path)
	case syscall.EACCES, syscall.EPERM:
		if u := t.st.User(); u != "" {
			return errorf("cannot %s %s: this server is for user %s, who changes only memories that are %s's alone; this one is public, shared with other users, or holds memories that are not %s's", op, path, u, u, u)
		}
		return errorf("cannot %s %s: permission denied", op, path)
	case syscall.EROFS:
		return errorf("cannot %s %s: the memory is read-only here (the MCP server or the mount runs with --read-only)", op, path)
	case syscall.ENOSPC, syscall.EDQUOT:
		return errorf("cannot %s %s: the disk holding the store is nearly full; nothing was written", op, path)
	case syscall.ENAMETOOLONG:
		return errorf("cannot %s %s: a name is longer than 255 bytes", op, path)
	case syscall.ENOTDIR:
		return errorf("cannot %s %s: a part of the path is not a directory", op, path)
	case syscall.EISDIR:
		return errorf("cannot %s %s: it is a directory", op, path)
	case syscall.ENOTEMPTY:
		return errorf("cannot %s %s: the directory is not empty", op, path)
	case syscall.EFBIG:
		return errorf("cannot %s %s: the file would be too large", op, path)
	case syscall.EIO:
		return errorf("cannot %s %s: the store reported an I/O error", op, path)
	}
	return errorf("cannot %s %s: %v", op, path, e)
}
