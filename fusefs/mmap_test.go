package fusefs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

// Rewrites of large files in place (store/inplace.go): what a close of a
// large file costs after a small change, through mmap as xfstests
// generic/247 makes it.

const mmapHelperEnv = "MNEMOFS_MMAP_HELPER"

// TestMmapHelper is the child process of BenchmarkMmapRewrite (mmap on a
// mount served by the same process could deadlock it): with
// MNEMOFS_MMAP_HELPER=path|cycles it opens path, maps one MiB of it,
// writes it, unmaps and closes, cycles times, from the end backwards.
func TestMmapHelper(t *testing.T) {
	arg := os.Getenv(mmapHelperEnv)
	if arg == "" {
		t.Skip("the child of BenchmarkMmapRewrite")
	}
	p, n, _ := strings.Cut(arg, "|")
	cycles, err := strconv.Atoi(n)
	must(t, err)
	if err := mmapCycles(p, cycles); err != nil {
		t.Fatal(err)
	}
}

func mmapCycles(p string, cycles int) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	mibs := int(fi.Size() >> 20)
	for k := 0; k < cycles; k++ {
		fd, err := unix.Open(p, unix.O_RDWR, 0)
		if err != nil {
			return err
		}
		off := int64((mibs - 1 - k%mibs) << 20)
		m, err := unix.Mmap(fd, off, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			unix.Close(fd)
			return err
		}
		for i := range m {
			m[i] = byte(k + 1)
		}
		err = unix.Munmap(m)
		if cerr := unix.Close(fd); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkMmapRewrite: one op is an open, a write of one MiB through a
// shared mapping, and the close, on a 256 MiB file, side by side on the
// loopback (with passthrough, and without: every write through the
// daemon, as on mnemofs) and on mnemofs (working/, rewritten in place).
//
//	go test -run '^$' -bench MmapRewrite -benchtime 200x ./fusefs/
func BenchmarkMmapRewrite(b *testing.B) {
	const size = 256 << 20
	lo, loOrig := loopbackMount(b)
	_ = loOrig
	npOrig := b.TempDir()
	np := loopbackWith(b, npOrig, fuse.CAP_PASSTHROUGH)
	tf := testMount(b)
	for _, s := range []struct{ name, dir string }{{"loopback", lo}, {"loopback-nopt", np}, {"mnemofs", tf.path("working")}} {
		b.Run(s.name, func(b *testing.B) {
			p := filepath.Join(s.dir, "big")
			f, err := os.Create(p)
			must(b, err)
			buf := make([]byte, 1<<20)
			for i := 0; i < size>>20; i++ {
				_, err = f.Write(buf)
				must(b, err)
			}
			must(b, f.Close())
			// A passthrough session of that write ends 100 ms after its
			// last close; an open for writing (not appending) starts none.
			time.Sleep(300 * time.Millisecond)
			b.ResetTimer()
			runMmapHelper(b, p, b.N)
			b.StopTimer()
			must(b, os.Remove(p))
		})
	}
}

func runMmapHelper(b *testing.B, p string, cycles int) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMmapHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d", mmapHelperEnv, p, cycles))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("mmap helper: %v\n%s", err, out)
	}
}

// blobFiles lists the content files of ino in the data directory data.
func blobFiles(t *testing.T, data string, ino uint64) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(data, "blobs", fmt.Sprintf("%02x", ino%256), fmt.Sprintf("%d-*", ino)))
	must(t, err)
	return m
}

// TestRewriteInPlace: a small change to a large file that keeps no
// versions (working/) is made in its content file, not to a copy of it,
// and its sha256, left for later, is right when read; a file of a
// versioned tree is still copied, its old content kept in history/.
func TestRewriteInPlace(t *testing.T) {
	t.Parallel()
	needLocalFiles(t)
	// Without passthrough: a session (a file just written) changes its
	// content file in place anyway (store/passthrough.go).
	tf := mountWith(t, t.TempDir(), store.Options{ScratchAge: -1}, Config{NoPassthrough: true})
	for _, c := range []struct {
		path    string
		size    int
		inPlace bool
	}{{"working/big", 16 << 20, true}, {"semantic/big.bin", 9 << 20, false}} {
		p := tf.path(c.path)
		content := make([]byte, c.size)
		for i := range content {
			content[i] = byte(i / 4096)
		}
		must(t, os.WriteFile(p, content, 0o644))
		var st syscall.Stat_t
		must(t, syscall.Stat(p, &st))
		waitXattr(t, p, "user.mnemofs.sha256", shaHex(content))
		before := blobFiles(t, tf.data, st.Ino)
		buf := make([]byte, 80)
		n, err := syscall.Getxattr(p, "user.mnemofs.version", buf)
		must(t, err)
		v0, _ := strconv.Atoi(string(buf[:n]))
		for k := 0; k < 3; k++ {
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			must(t, err)
			patch := []byte(fmt.Sprintf("change %d", k))
			off := int64(c.size/2 + k*100000)
			_, err = f.WriteAt(patch, off)
			must(t, err)
			must(t, f.Close())
			copy(content[off:], patch)
		}
		after := blobFiles(t, tf.data, st.Ino)
		if same := strings.Join(before, " ") == strings.Join(after, " "); same != c.inPlace {
			t.Errorf("%s: content files %v before, %v after; in place: %v, want %v", c.path, before, after, same, c.inPlace)
		}
		if got := read(t, p); got != string(content) {
			t.Errorf("%s: content differs", c.path)
		}
		n, err = syscall.Getxattr(p, "user.mnemofs.sha256", buf)
		if err != nil || string(buf[:n]) != shaHex(content) {
			t.Errorf("%s: sha256 %q, %v", c.path, buf[:n], err)
		}
		n, err = syscall.Getxattr(p, "user.mnemofs.version", buf)
		if want := strconv.Itoa(v0 + 3); err != nil || string(buf[:n]) != want {
			t.Errorf("%s: version %q, %v; want %s", c.path, buf[:n], err, want)
		}
		if !c.inPlace {
			v := tf.path(fmt.Sprintf("history/%s/v%d.bin", c.path, v0+2))
			if b, err := os.ReadFile(v); err != nil || len(b) != c.size {
				t.Errorf("%s: no version %d in history: %d bytes, %v", c.path, v0+2, len(b), err)
			}
		}
	}
}
