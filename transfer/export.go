package transfer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// Export: the tree as the store's user sees it (store.ReadDir, Attr,
// ReadAt), written out as plain files with their permission bits and
// times; symlinks as symlinks, other nodes skipped. It reads through the
// public store API only, as any reader of a mount would.

// Export writes the tree under from ("/" or "" for everything) of st to
// dest, a new or empty directory, as plain files.
func Export(st *store.Store, dest, from string, progress Progress) (*Result, error) {
	if progress == nil {
		progress = func(int64, int64) {}
	}
	start, err := st.Resolve(from)
	if err != nil {
		return nil, fmt.Errorf("export: %s: %w", from, err)
	}
	if i, err := st.Attr(start); err != nil || !i.IsDir() {
		return nil, fmt.Errorf("export: %s is not a directory", from)
	}
	if ents, err := os.ReadDir(dest); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("export: %s is not empty; give a new or empty directory", dest)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, err
	}
	res := &Result{}
	total := countFiles(st, start, 0) // for the progress bar: names only, no content
	type dirTime struct {
		path         string
		atime, mtime int64
	}
	var dirs []dirTime
	var walk func(ino uint64, out string) error
	walk = func(ino uint64, out string) error {
		ents, err := st.ReadDir(ino)
		if err != nil {
			return err
		}
		for _, e := range ents {
			i, err := st.Attr(e.Ino)
			if err != nil {
				return err
			}
			p := filepath.Join(out, e.Name)
			switch i.Mode & syscall.S_IFMT {
			case syscall.S_IFDIR:
				if err := os.Mkdir(p, os.FileMode(i.Mode&0o777)|0o700); err != nil {
					return err
				}
				if err := walk(e.Ino, p); err != nil {
					return err
				}
				os.Chmod(p, os.FileMode(i.Mode&0o777))
				dirs = append(dirs, dirTime{p, i.Atime, i.Mtime})
				res.Dirs++
			case syscall.S_IFREG:
				if err := exportFile(st, &i, p); err != nil {
					return err
				}
				res.Files++
				res.Bytes += int64(i.Size)
				progress(res.Files, max(total, res.Files))
			case syscall.S_IFLNK:
				if err := os.Symlink(i.Target, p); err != nil {
					return err
				}
				res.Symlinks++
			default:
				res.Skipped = append(res.Skipped, strings.TrimPrefix(p, dest))
			}
		}
		return nil
	}
	if err := walk(start, dest); err != nil {
		return res, err
	}
	for _, d := range dirs {
		os.Chtimes(d.path, time.Unix(0, d.atime), time.Unix(0, d.mtime))
	}
	progress(res.Files, res.Files)
	return res, nil
}

func exportFile(st *store.Store, i *store.Inode, p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, os.FileMode(i.Mode&0o777))
	if err != nil {
		return err
	}
	buf := make([]byte, store.ChunkSize)
	for off := int64(0); off < int64(i.Size); {
		n, err := st.ReadAt(i.Ino, buf, off)
		if err != nil {
			f.Close()
			return err
		}
		if n == 0 {
			break
		}
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
		off += int64(n)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chtimes(p, time.Unix(0, i.Atime), time.Unix(0, i.Mtime))
}

// countFiles counts the regular files below dir (as the store's user sees
// them).
func countFiles(st *store.Store, dir uint64, depth int) int64 {
	ents, err := st.ReadDir(dir)
	if err != nil || depth > 4096 {
		return 0
	}
	var n int64
	for _, e := range ents {
		switch e.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			n += countFiles(st, e.Ino, depth+1)
		case syscall.S_IFREG:
			n++
		}
	}
	return n
}
