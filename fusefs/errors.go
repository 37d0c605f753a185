package fusefs

import (
	"context"
	"errors"
	"log"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// errno maps an error from the store to the errno the kernel gets. Unknown
// errors are logged and become EIO.
func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, backend.ErrNoSpace):
		return syscall.ENOSPC
	case errors.Is(err, backend.ErrTxnTooBig):
		return syscall.EFBIG
	case errors.Is(err, backend.ErrNotFound):
		return syscall.ENOENT
	case errors.Is(err, backend.ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, backend.ErrUnavailable):
		return syscall.EIO // the backend said so once, not at every request
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return syscall.EINTR // the kernel interrupted the request
	}
	log.Printf("mnemofs: I/O error: %v", err)
	return syscall.EIO
}
