package fusefs

import (
	"log"
	"os"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// Config is how to mount.
type Config struct {
	// DataDir is reported by statfs (free space) and as the source name.
	DataDir string
	// Views is the catalog and index behind the generated trees; it must
	// be the store's OnChange handler and started.
	Views      *views.Engine
	ReadOnly   bool
	AllowOther bool
	Debug      bool
	Logger     *log.Logger
	// NoPassthrough keeps all file data going through the daemon even
	// where the kernel could read and write content files itself.
	NoPassthrough bool
	// ListGenerated lists the generated trees at the root, search/ in
	// the views and archive/trash in archive/. By default they are
	// reached by name only (root.go), so that a walk of the mount meets
	// each memory once and nothing from the trash.
	ListGenerated bool
	// MaxNodes bounds the nodes the kernel keeps looked up; past it the
	// oldest are dropped (prune.go). 0: DefaultMaxNodes.
	MaxNodes int
	// pruneByEntry: drop nodes by invalidating their entries even where
	// the kernel has FUSE_NOTIFY_PRUNE (tests of the older kernels' way).
	pruneByEntry bool
}

// Server is a mounted filesystem.
type Server struct {
	*fuse.Server
	notify *Notifier
	prune  *pruner
}

// Unmount unmounts and stops sending notifications.
func (s *Server) Unmount() error {
	s.notify.stop()
	return s.Server.Unmount()
}

// Wait waits until the filesystem is unmounted, however that came about.
func (s *Server) Wait() {
	s.Server.Wait()
	s.prune.close()
}

// Mount mounts st at mountpoint. n (from NewNotifier) must be the notifier
// the store was opened with, or nil.
func Mount(mountpoint string, st *store.Store, n *Notifier, cfg Config) (*Server, error) {
	if n == nil {
		n = NewNotifier()
	}
	f := &FS{st: st, dataDir: cfg.DataDir, readOnly: cfg.ReadOnly, notify: n, eng: cfg.Views, log: cfg.Logger,
		allowOther: cfg.AllowOther, ownerUid: uint32(os.Getuid()), prune: newPruner(cfg.MaxNodes), listGenerated: cfg.ListGenerated}
	root := &rootNode{dirNode{node: node{fsys: f, ino: store.RootIno}}}
	// Timeouts are set per reply (see ttl in fs.go): real nodes are
	// cached, generated ones are not. Missing names are not cached
	// either: a view gains names without the kernel creating them.
	opts := &fs.Options{
		MountOptions: fuse.MountOptions{
			FsName: cfg.DataDir,
			Name:   "mnemofs",
			// As root, mount(2) directly: no fusermount3 needed. Falls
			// back to fusermount3 for other users.
			DirectMount: os.Geteuid() == 0,
			// Bigger requests: fewer round trips for large files.
			MaxWrite:     1 << 20,
			MaxReadAhead: 1 << 20,
			// The kernel asks for security.capability before every
			// write; answer it without a round trip into the store.
			IgnoreSecurityLabels: true,
			// flock/fcntl locks are left to the kernel: all users of
			// a local store go through this one mount, so kernel-local
			// locks are exact. On a shared store (etcd) they are per
			// host, as the README says.
			EnableLocks: false,
			// File handles that outlive the kernel's inode: it may ask
			// for a node by its id alone (export.go).
			ExtraCapabilities: fuse.CAP_EXPORT_SUPPORT,
			// The page cache is kept right explicitly: every change
			// through the kernel updates it, the store announces its
			// own (notify.go), and a passthrough session ends with a
			// prefill or an invalidation. Without this, the first
			// stat after a passthrough write (new mtime) would drop the
			// prefilled pages.
			ExplicitDataCacheControl: true,
			AllowOther:               cfg.AllowOther,
			Debug:                    cfg.Debug,
			Logger:                   cfg.Logger,
		},
		Logger: cfg.Logger,
		// Modes as the store keeps them: go-fuse would otherwise show a
		// mode with no permission bits (chmod 000) as 0644 or 0755.
		NullPermissions: true,
		// A real node's id is its store inode number, so that file
		// handles (name_to_handle_at, NFS) stay valid across remounts
		// (export.go).
		ExternalNodeID: true,
		// The root keeps the store's inode number, as every other node.
		RootStableAttr: &fs.StableAttr{Ino: store.RootIno, Mode: syscall.S_IFDIR},
	}
	if cfg.AllowOther {
		// Other users get POSIX permission checks from the kernel.
		opts.MountOptions.Options = append(opts.MountOptions.Options, "default_permissions")
	}
	if cfg.ReadOnly {
		opts.MountOptions.Options = append(opts.MountOptions.Options, "ro")
	}
	srv, err := fs.Mount(mountpoint, root, opts)
	if err != nil {
		return nil, err
	}
	n.start(f)
	f.prune.start(srv, cfg.pruneByEntry)
	cfg.Views.SetListener(f.memoryChanged)
	if !cfg.NoPassthrough && !cfg.ReadOnly && canPassthrough(srv, cfg.DataDir) {
		st.EnablePassthrough()
	}
	return &Server{Server: srv, notify: n, prune: f.prune}, nil
}

// canPassthrough reports whether the kernel takes backing files from this
// mount (FUSE passthrough: Linux >= 6.9, CAP_SYS_ADMIN, and a data
// directory not itself on a stacked filesystem too deep), by registering
// one.
func canPassthrough(srv *fuse.Server, dir string) bool {
	if srv.KernelSettings().Flags64()&fuse.CAP_PASSTHROUGH == 0 {
		return false
	}
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, ".passthrough-probe-*")
	if err != nil {
		return false
	}
	defer os.Remove(f.Name())
	defer f.Close()
	id, errno := srv.RegisterBackingFd(&fuse.BackingMap{Fd: int32(f.Fd())})
	if errno != 0 {
		return false
	}
	srv.UnregisterBackingFd(id)
	return true
}
