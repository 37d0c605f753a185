package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Holder describes the process that has a store open.
type Holder struct {
	Pid        int    `json:"pid"`
	Command    string `json:"command"`
	Mountpoint string `json:"mountpoint,omitempty"`
	Socket     string `json:"socket,omitempty"`
}

// Lock is a held store lock.
type Lock struct {
	f *os.File
}

// ErrBusy is returned by Acquire when another process holds the store.
var ErrBusy = errors.New("store is in use")

// LockPath is the lock file of a data dir.
func LockPath(dataDir string) string { return filepath.Join(dataDir, "mnemofs.lock") }

// Acquire takes the store lock of dataDir and records h in it. When the
// store is busy it returns ErrBusy and what the holder recorded.
func Acquire(dataDir string, h Holder) (*Lock, *Holder, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(LockPath(dataDir), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			other, _ := ReadHolder(dataDir)
			return nil, other, ErrBusy
		}
		return nil, nil, err
	}
	l := &Lock{f: f}
	return l, nil, l.Update(h)
}

// Update rewrites the holder record.
func (l *Lock) Update(h Holder) error {
	b, _ := json.Marshal(h)
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt(append(b, '\n'), 0)
	return err
}

// Release clears the record and drops the lock.
func (l *Lock) Release() {
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// ReadHolder reads the holder record of dataDir.
func ReadHolder(dataDir string) (*Holder, error) {
	b, err := os.ReadFile(LockPath(dataDir))
	if err != nil {
		return nil, err
	}
	h := &Holder{}
	if err := json.Unmarshal(b, h); err != nil {
		return nil, fmt.Errorf("unreadable lock file %s", LockPath(dataDir))
	}
	return h, nil
}
