package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/control"
	"github.com/mnemofs/mnemofs/embed"
	"github.com/mnemofs/mnemofs/fusefs"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

func reservedNames() map[string]bool { return fusefs.ReservedNames() }

func mountCmd() *cobra.Command {
	var cfg fusefs.Config
	var user, cacheSize, model, logFile string
	var bg bool
	c := &cobra.Command{
		Use:   "mount [--data DIR] [--user NAME] [--model DIR|NAME] [--read-only] [--allow-other] [--cache-size SIZE] [--list-generated] [--background] MOUNTPOINT",
		Short: "mount the store at MOUNTPOINT (in the foreground, Ctrl-C unmounts; or --background)",
		Args:  exactArgs(1, "MOUNTPOINT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("user") && !store.ValidName(user) {
				return fail("--user needs a user name usable as a file name (got %q)", user)
			}
			n, err := humanize.ParseBytes(cacheSize)
			if err != nil || n > 1<<40 {
				return fail("--cache-size needs a size such as 64MiB, 512KiB or 0 (off), got %q", cacheSize)
			}
			if bg && !inBackground() {
				return startBackground(withoutBackground(cmdArgs), args[0])
			}
			if err := logTo(logFile); err != nil {
				return err
			}
			return mount(args[0], cfg, user, int64(n), model)
		},
	}
	c.Flags().BoolVar(&bg, "background", false, "return once the mount is ready, leaving it served by a process in the background ('umount MOUNTPOINT' or 'mnemofs unmount MOUNTPOINT' stops it); its log goes to --log-file, else to syslog")
	c.Flags().StringVar(&logFile, "log-file", "", "append the log to this file instead of standard error")
	c.Flags().StringVar(&cacheSize, "cache-size", "64MiB", "memory for the hot caches of file content and search results (0 turns them off); a quarter of it is how far the mapped index and store tables may grow in the resident set, and one per KiB of it (at least 16384) is how many files and directories the kernel keeps looked up")
	c.Flags().StringVar(&model, "model", "", "embedding model for hybrid search: a directory (cybertron layout) or a name from 'mnemofs model list'")
	c.Flags().StringVar(&user, "user", "", "show only this user's memories (and those naming no user); files written belong to the user")
	c.Flags().BoolVar(&cfg.ReadOnly, "read-only", false, "mount read-only")
	c.Flags().BoolVar(&cfg.AllowOther, "allow-other", false, "let other users in, with POSIX permission checks (needs user_allow_other in /etc/fuse.conf unless root)")
	c.Flags().BoolVar(&cfg.Debug, "debug", false, "log every FUSE request")
	c.Flags().BoolVar(&cfg.ListGenerated, "list-generated", false, "list the generated trees (by-*, recent, history, search, context, meta) at the root and archive/trash in archive/: by default they open by name but are not listed, so that grep -r, find, du or tar of the mount meet each memory once")
	c.Flags().BoolVar(&cfg.NoPassthrough, "no-passthrough", false, "never let the kernel read and write content files itself (FUSE passthrough, used when root on Linux >= 6.9): all data goes through mnemofs")
	return c
}

func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fail("%s needs %s (see 'mnemofs %s --help')", cmd.Name(), names, cmd.Name())
		}
		return nil
	}
}

// checkMountpoint gives the one-line errors for a bad mountpoint.
func checkMountpoint(mnt, data string) error {
	fi, err := os.Stat(mnt)
	switch {
	case errors.Is(err, syscall.ENOTCONN):
		return fail("%s is a dead mount (Transport endpoint is not connected): clear it with 'fusermount3 -uz %s' and mount again", mnt, mnt)
	case errors.Is(err, os.ErrNotExist):
		return fail("mountpoint %s does not exist: create it with 'mkdir -p %s'", mnt, mnt)
	case err != nil:
		return fail("mountpoint %s: %v", mnt, err)
	case !fi.IsDir():
		return fail("mountpoint %s is not a directory", mnt)
	}
	if ents, err := os.ReadDir(mnt); err != nil {
		return fail("mountpoint %s cannot be read: %v", mnt, err)
	} else if len(ents) > 0 {
		return fail("mountpoint %s is not empty: mount on an empty directory", mnt)
	}
	if within(mnt, data) {
		return fail("mountpoint %s is inside the data directory %s: choose a mountpoint outside it", mnt, data)
	}
	if within(data, mnt) {
		return fail("the data directory %s is inside the mountpoint %s: choose another mountpoint or --data", data, mnt)
	}
	return nil
}

// within reports whether p is dir or below it (after resolving symlinks).
func within(p, dir string) bool {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func checkFuse() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fail("FUSE is not available (/dev/fuse is missing): load it with 'modprobe fuse', or in a container run with --device /dev/fuse")
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			if _, err := exec.LookPath("fusermount"); err != nil {
				return fail("mounting as a non-root user needs fusermount3: install the fuse3 package (e.g. 'sudo apt-get install fuse3')")
			}
		}
	}
	return nil
}

func mount(mountpoint string, cfg fusefs.Config, user string, cacheBytes int64, model string) error {
	mnt, err := filepath.Abs(mountpoint)
	if err != nil {
		return err
	}
	data, err := dataDir()
	if err != nil {
		return err
	}
	if err := checkMountpoint(mnt, data); err != nil {
		return err
	}
	if err := checkFuse(); err != nil {
		return err
	}
	// Callers may open as many files as they like: as many descriptors
	// as allowed, before the store takes its share (store.RaiseFileLimit).
	store.RaiseFileLimit()
	var enc embed.Encoder
	if model != "" {
		if enc, err = loadModel(model); err != nil {
			return err
		}
		defer enc.Close()
	}
	sock := control.SocketPath(data) // Serve may pick a fallback: see below
	me := control.Holder{Pid: os.Getpid(), Command: "mount", Mountpoint: mnt, Socket: sock}
	lock, holder, err := control.Acquire(data, me)
	if errors.Is(err, control.ErrBusy) {
		if holder != nil && holder.Mountpoint != "" {
			return fail("the store in %s is already mounted at %s (pid %d): unmount it first with 'mnemofs unmount %s'", data, holder.Mountpoint, holder.Pid, holder.Mountpoint)
		}
		if holder != nil && holder.Command == "mcp" {
			return fail("the store in %s is held by 'mnemofs mcp' (pid %d), which opened it without a mount: stop it first, then mount, and start mcp again (with a mount running, mcp goes through it)", data, holder.Pid)
		}
		if holder != nil {
			return fail("the store in %s is busy: pid %d is running 'mnemofs %s'", data, holder.Pid, holder.Command)
		}
		return fail("the store in %s is busy", data)
	}
	if err != nil {
		return fmt.Errorf("locking the store in %s: %w", data, err)
	}
	defer lock.Release()
	n := fusefs.NewNotifier()
	cfg.Logger = log.New(os.Stderr, "mnemofs: ", 0)
	eng := views.NewEngine(cfg.Logger)
	content, queries := cache.Split(cacheBytes)
	cfg.MaxNodes = cache.Nodes(cacheBytes)
	eng.SetCacheBytes(queries)
	if enc != nil {
		eng.SetEncoder(enc)
	}
	keepIndex(eng, data, user, cfg.ReadOnly)
	if content == 0 {
		content = -1 // off (0 would be the default)
	}
	kv, st, err := openStore(data, storeOpen{user: user, notify: n, onChange: eng.Handle, cacheBytes: content, readOnly: cfg.ReadOnly, create: !cfg.ReadOnly})
	if err != nil {
		return err
	}
	trim := startTrim(data, cacheBytes, kv, eng)
	defer trim.Stop()
	eng.SetAfterSearch(trim.Poke)
	// Every CPU for reading the snapshot or building the index (a batch
	// job, with parts in parallel), then one less for serving requests,
	// except while background work runs (procs.go).
	cpus := newProcs()
	eng.SetBackground(cpus.background)
	eng.SetMetaSources(metaSources(st))
	eng.Start(st)
	done := make(chan struct{}) // closed when the mount returns
	defer close(done)
	go afterLoad(eng, st, cpus, cfg.MaxNodes, done)
	cfg.DataDir = data
	cfg.Views = eng
	srv, err := fusefs.Mount(mnt, st, n, cfg)
	if err != nil {
		eng.Stop() // before the deferred enc.Close: its worker may be encoding
		trim.Stop()
		st.Close()
		kv.Close()
		return fail("cannot mount %s: %v", mnt, err)
	}
	waited := make(chan struct{}) // closed when the filesystem has ended
	unmount := func() {
		mountStopping()
		// A request waiting for the index (a search during the first
		// build) would keep the mount busy until the build ends.
		eng.Interrupt()
		// (Found before: a bind mount keeps the filesystem, and
		// Unmount waiting, after mnt goes.)
		fm, _ := mountsOf(mnt)
		go sayHolders(fm, waited)
		for try := 0; ; try++ {
			err := srv.Unmount()
			if err == nil {
				return
			}
			if try == 20 {
				fmt.Fprintf(os.Stderr, "mnemofs: %s is busy (%v); detaching it now\n", mnt, err)
				syscall.Unmount(mnt, syscall.MNT_DETACH)
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	ctl, err := control.Serve(data, st, eng, func() error { go unmount(); return nil }, cfg.Logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mnemofs: warning: no control socket (%v): other commands cannot reach this mount\n", err)
		me.Socket = ""
		lock.Update(me)
	} else if ctl.Path() != sock {
		me.Socket = ctl.Path()
		lock.Update(me)
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-sig
		unmount()
	}()
	stopProfile := startProfile()
	stopMaintenance := func() {}
	if !cfg.ReadOnly { // a read-only mount writes nothing, maintenance included
		stopMaintenance = startMaintenance(st, cfg.Logger, cpus.background)
	}
	as := ""
	if user != "" {
		as = " for user " + user
	}
	if fi, err := os.Stat(data); err == nil && fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(os.Stderr, "mnemofs: warning: the data directory %s is open to other users (mode %04o): they can read the store's files; 'chmod 700 %s' (SECURITY.md)\n", data, fi.Mode().Perm(), data)
	}
	where := data
	if u := backendURL(); u != "" {
		where = u + " (host-local state in " + data + ")"
	}
	var startErr error
	if err := answers(mnt); err != nil {
		startErr = err
		go unmount()
	} else {
		stop := "Ctrl-C"
		if inBackground() {
			stop = "'umount " + mnt + "'"
		}
		fmt.Printf("mnemofs: mounted %s at %s%s (stop with %s or 'mnemofs unmount %s')\n", where, mnt, as, stop, mnt)
		mountReady(mnt, "mounted "+where+" at "+mnt+as)
	}
	srv.Wait()
	mountStopping()
	close(waited)
	trim.Stop()
	stopMaintenance()
	stopProfile()
	signal.Stop(sig)
	eng.Stop()
	if ctl != nil {
		ctl.Close()
	}
	err = errors.Join(st.Close(), kv.Close())
	if err != nil {
		return fmt.Errorf("closing the store: %w", err)
	}
	if startErr != nil {
		return startErr
	}
	fmt.Printf("mnemofs: unmounted %s\n", mnt)
	return nil
}

// mountedData returns the data dir (the source) of the mnemofs mount at mnt.
func mountedData(mnt string) (string, bool) {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "", false
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && unescapeMount(f[1]) == mnt && strings.Contains(f[2], "mnemofs") {
			return unescapeMount(f[0]), true
		}
	}
	return "", false
}

// unescapeMount undoes the octal escapes of /proc/mounts (\040 for space).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
