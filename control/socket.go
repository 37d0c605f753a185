package control

// The control socket.
//
// Where it lives: in the data dir, DATA/control.sock. When that path is
// longer than a Unix socket address allows (107 bytes), the mount binds it
// and the CLI connects to it through /proc/self/fd/N/control.sock, N an
// O_PATH descriptor of the data dir, which Linux resolves as the directory
// itself. Only when the data dir cannot hold the socket (a long path and
// no /proc, a filesystem without sockets) does it go to
// $XDG_RUNTIME_DIR/mnemofs-<hash>.sock, when that directory is set and
// private, else to $TMPDIR/mnemofs-<uid>/mnemofs-<hash>.sock in a 0700
// directory of the mount's own user, checked (a real directory, its owner,
// no access for others) before use, as tmux does: never to a world-writable
// directory under a name another user could take first. The lock file
// records the real path (Holder.Socket); the CLI applies the same long-path
// trick to it.
//
// How it is made: bound inside a fresh 0700 directory beside its final
// name, made 0600, then renamed into place, so that no other user can
// reach it at any moment (a umask set around the bind would change the
// mode of whatever other goroutines create meanwhile).
//
// Who may talk: both ends check the other's credentials (SO_PEERCRED).
// The mount serves only its own uid and root; the CLI talks only to a
// mount run by the data dir's owner or by root.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxSunPath is the longest path a Unix socket address takes (sun_path
// holds 108 bytes with the terminating NUL).
const maxSunPath = 107

// SocketPath is where the control socket of dataDir lives (but for the
// fallbacks above, which Serve reports through Server.Path).
func SocketPath(dataDir string) string { return filepath.Join(dataDir, "control.sock") }

// socketCandidates lists where a mount of dataDir may put its socket,
// best first (see the top of this file).
func socketCandidates(dataDir string) []string {
	h := sha256.Sum256([]byte(dataDir))
	name := "mnemofs-" + hex.EncodeToString(h[:8]) + ".sock"
	c := []string{SocketPath(dataDir)}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) && checkPrivateDir(d) == nil {
		c = append(c, filepath.Join(d, name))
	}
	return append(c, filepath.Join(os.TempDir(), fmt.Sprintf("mnemofs-%d", os.Geteuid()), name))
}

// checkPrivateDir checks that dir is a directory (not a symlink) of the
// caller's own that no one else has any access to.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case !ok || st.Uid != uint32(os.Geteuid()):
		return fmt.Errorf("%s belongs to another user", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s is open to other users (mode %04o)", dir, fi.Mode().Perm())
	}
	return nil
}

// ensurePrivateDir creates dir (0700) unless it exists, then checks it.
func ensurePrivateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return checkPrivateDir(dir)
}

// withShortPath calls f with a name of path short enough for a socket
// address: path itself, or /proc/self/fd/N/BASE with N its directory.
func withShortPath(path string, f func(string) error) error {
	if len(path) <= maxSunPath {
		return f(path)
	}
	dir, base := filepath.Split(path)
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	short := fmt.Sprintf("/proc/self/fd/%d/%s", fd, base)
	if len(short) > maxSunPath {
		return fmt.Errorf("socket name %q too long", base)
	}
	return f(short)
}

// listenAt binds a Unix socket at path that no other user can reach at
// any moment, replacing what was there (a dead mount's socket: the store
// lock proves that no live mount uses it).
func listenAt(path string) (*net.UnixListener, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".control-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	bound := filepath.Join(tmp, "s")
	var ln *net.UnixListener
	err = withShortPath(bound, func(p string) error {
		var err error
		ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
		return err
	})
	if err != nil {
		return nil, err
	}
	// Its name moves, and a /proc/self/fd name would later name another
	// directory: Server.Close removes the socket itself.
	ln.SetUnlinkOnClose(false)
	if err = os.Chmod(bound, 0o600); err == nil {
		err = os.Rename(bound, path)
	}
	if err != nil {
		ln.Close()
		os.Remove(bound)
		return nil, err
	}
	return ln, nil
}

// listen binds the control socket of dataDir at the first candidate that
// takes it, returning the path bound.
func listen(dataDir string) (*net.UnixListener, string, error) {
	var errs []error
	cands := socketCandidates(dataDir)
	for i, p := range cands {
		if i == len(cands)-1 {
			if err := ensurePrivateDir(filepath.Dir(p)); err != nil {
				errs = append(errs, err)
				break
			}
		}
		ln, err := listenAt(p)
		if err == nil {
			return ln, p, nil
		}
		errs = append(errs, err)
	}
	return nil, "", errors.Join(errs...)
}

// peerUID returns the uid of the process at the other end of c.
func peerUID(c *net.UnixConn) (uint32, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return cred.Uid, nil
}

// peerListener serves only peers of the mount's own uid and root; others
// get a closed connection and one log line.
type peerListener struct {
	*net.UnixListener
	logger *log.Logger
}

func (l peerListener) Accept() (net.Conn, error) {
	me := uint32(os.Geteuid())
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && (uid == me || uid == 0) {
			return c, nil
		}
		if err != nil {
			l.logger.Printf("control socket: refused a connection whose credentials cannot be read: %v", err)
		} else {
			l.logger.Printf("control socket: refused a connection from uid %d (only uid %d and root are served)", uid, me)
		}
		c.Close()
	}
}

// ForeignServerError is what Call returns when the socket is held by a
// process of another user than the store's owner (and not root).
type ForeignServerError struct {
	Socket     string
	Uid, Owner uint32
}

func (e *ForeignServerError) Error() string {
	return fmt.Sprintf("the control socket %s is held by uid %d, not the store's owner (uid %d): refusing to talk to it", e.Socket, e.Uid, e.Owner)
}

// dialPeer connects to the control socket at path and checks that the
// process serving it is owner or root.
func dialPeer(ctx context.Context, path string, owner uint32) (net.Conn, error) {
	var c net.Conn
	err := withShortPath(path, func(p string) error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, "unix", p)
		return err
	})
	if err != nil {
		return nil, err
	}
	uid, err := peerUID(c.(*net.UnixConn))
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("reading the credentials of the control socket %s: %w", path, err)
	}
	if uid != owner && uid != 0 {
		c.Close()
		return nil, &ForeignServerError{Socket: path, Uid: uid, Owner: owner}
	}
	return c, nil
}

// dirOwner returns the uid owning dir.
func dirOwner(dir string) (uint32, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("%s: no owner", dir)
	}
	return st.Uid, nil
}
