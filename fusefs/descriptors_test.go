package fusefs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

const fdHelperEnv = "MNEMOFS_FD_HELPER"

// TestFdHelper is the child of TestDescriptorExhaustion: with
// MNEMOFS_FD_HELPER=dir it takes descriptors on the mount until it is
// refused, as xfstests generic/531 does (create, unlink, keep open), then
// opens large files to write and keeps them, then writes enough small
// values for the KV to start new memtables, all while it holds them. It
// prints every errno it met, and how often.
func TestFdHelper(t *testing.T) {
	dir := os.Getenv(fdHelperEnv)
	if dir == "" {
		t.Skip("the child of TestDescriptorExhaustion")
	}
	errs := map[string]int{}
	note := func(err error) {
		var e syscall.Errno
		if !errors.As(err, &e) {
			e = 0xffff
		}
		errs[unix.ErrnoName(e)]++
	}
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for k := 0; k < 1200; k++ {
		p := filepath.Join(dir, fmt.Sprintf("moo%d", k))
		fd, err := unix.Open(p, unix.O_CREAT|unix.O_RDWR, 0o644)
		if err != nil {
			note(err)
			break
		}
		fds = append(fds, fd)
		if _, err := unix.Write(fd, []byte("x")); err != nil {
			note(err)
		}
		if err := unix.Unlink(p); err != nil {
			note(err)
		}
	}
	big := bytes.Repeat([]byte("b"), 64<<10)
	for k := 0; k < 300; k++ {
		fd, err := unix.Open(filepath.Join(dir, fmt.Sprintf("big%d", k)), unix.O_CREAT|unix.O_WRONLY, 0o644)
		if err != nil {
			note(err)
			continue
		}
		fds = append(fds, fd)
		if _, err := unix.Write(fd, big); err != nil {
			note(err)
		}
	}
	// Small values fill the KV's memtable (large ones go to its value
	// log): 24 MiB of them makes it start new memtables.
	val := bytes.Repeat([]byte("v"), 3000)
	kv := filepath.Join(dir, "kv")
	if err := os.WriteFile(kv, nil, 0o644); err != nil {
		note(err)
	}
	for k := 0; k < 8000; k++ {
		if err := unix.Setxattr(kv, fmt.Sprintf("user.k%d", k), val, 0); err != nil {
			note(err)
		}
	}
	var out []string
	for e, n := range errs {
		out = append(out, fmt.Sprintf("%s=%d", e, n))
	}
	sort.Strings(out)
	fmt.Printf("fds=%d errors=%s\n", len(fds), strings.Join(out, ","))
}

// TestDescriptorExhaustion: a program that takes descriptors on the mount
// until it is refused, holding them, leaves the mount up and consistent
// (xfstests generic/531): the files the store keeps open for callers take
// at most half the process's descriptors, so the KV can always open its
// next memtable, and callers are refused with EMFILE or ENFILE, never
// EIO. The mount runs with a small limit (this test process's).
func TestDescriptorExhaustion(t *testing.T) {
	// Not parallel: it lowers this process's limit on open files.
	needLocalFiles(t)
	var rl syscall.Rlimit
	must(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl))
	low := rl
	low.Cur = 400
	must(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl) })

	data := t.TempDir()
	tf := mountAt(t, data, store.Options{}) // the store takes half of 400
	dir := tf.path("working/fd")
	must(t, os.Mkdir(dir, 0o755))
	cmd := exec.Command(os.Args[0], "-test.run=^TestFdHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fdHelperEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	line := ""
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "fds=") {
			line = l
		}
	}
	t.Logf("helper: %s", line)
	_, errList, _ := strings.Cut(line, "errors=")
	for _, e := range strings.Split(errList, ",") {
		name, _, _ := strings.Cut(e, "=")
		switch name {
		case "", "EMFILE", "ENFILE", "ENOMEM":
		default:
			t.Errorf("the helper met %s (%s): a caller out of descriptors gets EMFILE, ENFILE or ENOMEM", name, line)
		}
	}
	// The mount is up, and takes and keeps new content.
	p := tf.path("working/after.md")
	must(t, os.WriteFile(p, []byte("still here\n"), 0o644))
	if got := read(t, p); got != "still here\n" {
		t.Errorf("after: %q", got)
	}
	if n, err := os.ReadDir(tf.path("working/fd")); err != nil || len(n) < 2 {
		t.Errorf("listing after: %d entries, %v", len(n), err)
	}
	buf := make([]byte, 4000)
	if n, err := unix.Getxattr(filepath.Join(dir, "kv"), "user.k7999", buf); err != nil || n != 3000 {
		t.Errorf("the last xattr: %d bytes, %v", n, err)
	}
	// And the store agrees with itself once remounted.
	tf.unmount()
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	tf = mountAt(t, data, store.Options{})
	rep, err := tf.st.Fsck(false)
	must(t, err)
	if len(rep.Problems) > 0 {
		t.Errorf("fsck: %v", rep.Problems)
	}
	if got := read(t, tf.path("working/after.md")); got != "still here\n" {
		t.Errorf("after a remount: %q", got)
	}
}
