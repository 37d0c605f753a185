package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
)

// rewound is a directory listing that, read again from its start
// (rewinddir, or a seek to offset 0), lists the directory again, as POSIX
// asks of rewinddir: go-fuse's list stream would replay the entries taken
// at opendir, so that a program removing every entry and rewinding to
// check would see them all still there. Other offsets seek in the
// listing as it is.
type rewound struct {
	fs.DirStream
	again func(context.Context) (fs.DirStream, syscall.Errno)
}

var _ fs.FileSeekdirer = (*rewound)(nil)

// rewindable makes ds, listed by again, list anew when rewound.
func rewindable(ds fs.DirStream, again func(context.Context) (fs.DirStream, syscall.Errno)) fs.DirStream {
	return &rewound{DirStream: ds, again: again}
}

func (r *rewound) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if off == 0 {
		ds, errno := r.again(ctx)
		if errno != 0 {
			return errno
		}
		if rw, ok := ds.(*rewound); ok {
			ds = rw.DirStream
		}
		r.DirStream.Close()
		r.DirStream = ds
		return 0
	}
	if sd, ok := r.DirStream.(fs.FileSeekdirer); ok {
		return sd.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}
