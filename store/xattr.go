package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// SystemXattrPrefix names the generated, read-only attributes.
const SystemXattrPrefix = "user.mnemofs."

// XattrMax is the largest xattr value accepted.
const XattrMax = 64 << 10

// Xattr flags (setxattr).
const (
	XattrCreate  = 1
	XattrReplace = 2
)

func checkXattrName(name string) error {
	switch {
	case name == "" || len(name) > 255:
		return syscall.ERANGE
	case !strings.HasPrefix(name, "user."):
		return syscall.EOPNOTSUPP
	case strings.HasPrefix(name, SystemXattrPrefix):
		return syscall.EPERM
	}
	return nil
}

// GetXattr returns an attribute value: a user attribute, or a generated
// user.mnemofs.* one.
func (s *Store) GetXattr(ino uint64, name string) ([]byte, error) {
	if key, ok := strings.CutPrefix(name, SystemXattrPrefix); ok {
		sys, err := s.systemXattrs(ino, key == "sha256")
		if err != nil {
			return nil, err
		}
		v, ok := sys[key]
		if !ok {
			return nil, syscall.ENODATA
		}
		return []byte(v), nil
	}
	if !strings.HasPrefix(name, "user.") {
		// Only user attributes can be set (checkXattrName). The kernel
		// asks for security.capability before each write to a file
		// that may carry it: answer without a KV lookup.
		return nil, syscall.ENODATA
	}
	var v []byte
	err := s.kv.View(func(t backend.Txn) error {
		var err error
		v, err = t.Get(backend.XattrKey(ino, name))
		return err
	})
	if errors.Is(err, backend.ErrNotFound) {
		if _, err := s.inode(ino); err != nil {
			return nil, err
		}
		return nil, syscall.ENODATA
	}
	return v, err
}

// SetXattr sets a user attribute.
func (s *Store) SetXattr(ino uint64, name string, val []byte, flags uint32) error {
	return again0(func() error { return s.setXattrOnce(ino, name, val, flags) })
}

// setXattrOnce is SetXattr, once (again: stale.go).
func (s *Store) setXattrOnce(ino uint64, name string, val []byte, flags uint32) error {
	if err := checkXattrName(name); err != nil {
		return err
	}
	if len(val) > XattrMax {
		return syscall.E2BIG
	}
	if err := s.space.need(len(name) + len(val)); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.unlock()
	if err := s.mayChange(ino); err != nil {
		return err
	}
	if err := s.pinned(ino); err != nil {
		return err
	}
	i, err := s.editable(ino)
	if err != nil {
		return err
	}
	i.Ctime = s.now().UnixNano()
	return s.update(func(t backend.Txn) error {
		_, err := t.Get(backend.XattrKey(ino, name))
		exists := err == nil
		switch {
		case err != nil && !errors.Is(err, backend.ErrNotFound):
			return err
		case flags&XattrCreate != 0 && exists:
			return syscall.EEXIST
		case flags&XattrReplace != 0 && !exists:
			return syscall.ENODATA
		}
		if !exists {
			i.Xattrs++
		}
		return t.Set(backend.XattrKey(ino, name), val)
	}, i)
}

// RemoveXattr removes a user attribute.
func (s *Store) RemoveXattr(ino uint64, name string) error {
	return again0(func() error { return s.removeXattrOnce(ino, name) })
}

// removeXattrOnce is RemoveXattr, once (again: stale.go).
func (s *Store) removeXattrOnce(ino uint64, name string) error {
	if err := checkXattrName(name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.unlock()
	if err := s.mayChange(ino); err != nil {
		return err
	}
	if err := s.pinned(ino); err != nil {
		return err
	}
	i, err := s.editable(ino)
	if err != nil {
		return err
	}
	i.Ctime = s.now().UnixNano()
	return s.update(func(t backend.Txn) error {
		if _, err := t.Get(backend.XattrKey(ino, name)); err != nil {
			if errors.Is(err, backend.ErrNotFound) {
				return syscall.ENODATA
			}
			return err
		}
		if i.Xattrs > 0 {
			i.Xattrs--
		}
		return t.Delete(backend.XattrKey(ino, name))
	}, i)
}

// ListXattr lists attribute names: user attributes and, when system is
// set, a regular file's generated ones. Listings meant for programs that
// copy what they list (cp -a, rsync -X, tar --xattrs) leave those out:
// copied, they would be frozen on the copy, and refused when written
// back. GetXattr reads them by name either way.
func (s *Store) ListXattr(ino uint64, system bool) ([]string, error) {
	var names []string
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.XattrPrefix(ino), nil, true, func(k, _ []byte) bool {
			names = append(names, backend.XattrName(k))
			return true
		})
	})
	if err != nil {
		return nil, err
	}
	if system {
		sys, err := s.systemXattrs(ino, false)
		if err != nil {
			return nil, err
		}
		for k := range sys {
			names = append(names, SystemXattrPrefix+k)
		}
	} else if len(names) == 0 {
		if _, err := s.inode(ino); err != nil {
			return nil, err
		}
	}
	sort.Strings(names)
	return names, nil
}

// systemXattrs are the generated attributes of a regular file (none for
// other nodes).
func (s *Store) systemXattrs(ino uint64, wantSHA bool) (map[string]string, error) {
	s.commitDeferred(ino) // a close that left its commit for later
	i, err := s.Attr(ino)
	if err != nil {
		return nil, err
	}
	if !i.IsReg() || len(i.Links) == 0 {
		return nil, nil
	}
	in, err := s.Info(ino)
	if err != nil {
		return nil, err
	}
	if wantSHA && in.SHA256 == "" && in.Size <= HashMax {
		// Left for after a passthrough session (passthrough.go).
		if s.hashNow(ino) {
			if in, err = s.Info(ino); err != nil {
				return nil, err
			}
		} else if sum, err := s.hashCurrent(ino, in.Size); err == nil {
			// Still open (a handle whose release is on its way, or a
			// writer): the hash of its first in.Size bytes as they are
			// now, the size this answer reports.
			in.SHA256 = sum
		}
	}
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	m := map[string]string{
		"created":      ts(in.Created),
		"modified":     ts(in.Modified),
		"access_count": strconv.FormatInt(in.AccessCount, 10),
		"size":         strconv.FormatUint(in.Size, 10),
		"sha256":       in.SHA256,
		"version":      strconv.Itoa(in.Version),
		"type":         in.Type,
		"path":         in.Path,
		"lineage":      strconv.FormatUint(in.Lineage, 10),
	}
	if in.LastAccessed != nil {
		m["last_accessed"] = ts(*in.LastAccessed)
	}
	if in.Error != "" {
		m["error"] = in.Error
	}
	if len(in.Users) > 0 {
		m["users"] = strings.Join(in.Users, ",")
	}
	if len(in.Tags) > 0 {
		m["tags"] = strings.Join(in.Tags, ",")
	}
	if in.ID != "" {
		m["id"] = in.ID
	}
	if in.Importance != nil {
		m["importance"] = fmt.Sprint(*in.Importance)
	}
	return m, nil
}

// hashCurrent returns the sha256 of the first size bytes of ino as they
// read now (fewer if it shrank meanwhile).
func (s *Store) hashCurrent(ino, size uint64) (string, error) {
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for off := uint64(0); off < size; {
		n, err := s.ReadAt(ino, buf[:min(uint64(len(buf)), size-off)], int64(off))
		if err != nil {
			return "", err
		}
		if n == 0 {
			break
		}
		h.Write(buf[:n])
		off += uint64(n)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
