package fusefs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

// kernelPassthrough reports whether this machine gives FUSE daemons
// passthrough (root on Linux >= 6.9), where the mount must use it.
func kernelPassthrough() bool {
	var u unix.Utsname
	if os.Geteuid() != 0 || unix.Uname(&u) != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 6 || (major == 6 && minor >= 9)
}

func shaHex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func waitXattr(t *testing.T, p, name, want string) {
	t.Helper()
	var got string
	for range 100 {
		buf := make([]byte, 256)
		n, err := unix.Getxattr(p, name, buf)
		if err == nil {
			got = string(buf[:n])
			if got == want {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s of %s = %q, want %q", name, p, got, want)
}

// TestPassthrough: files written through FUSE passthrough (the kernel
// writes the content file, the daemon never sees the data) read back,
// stat, hash, survive a remount and leave fsck consistent, for every way
// a session starts and is shared.
func TestPassthrough(t *testing.T) {
	// Not parallel: it counts the writes that reach any daemon of this
	// process (latWrite is the package's).
	needLocalFiles(t)
	data := t.TempDir()
	tf := mountAt(t, data, store.Options{ScratchAge: -1})
	if kernelPassthrough() != tf.st.PassthroughOn() {
		t.Fatalf("passthrough on: %v, want %v (root on Linux >= 6.9)", tf.st.PassthroughOn(), kernelPassthrough())
	}
	dir := tf.path("working/pt")
	must(t, os.MkdirAll(dir, 0o755))
	writes0 := latWrite.Summary().Count

	// A small file: created, written, read back while open and after.
	small := filepath.Join(dir, "small.md")
	f, err := os.Create(small)
	must(t, err)
	body := []byte("---\ntags: [pt]\n---\nwritten by the kernel\n")
	_, err = f.Write(body)
	must(t, err)
	if got, err := os.ReadFile(small); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read while open: %q, %v", got, err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != int64(len(body)) {
		t.Fatalf("fstat while open: %v, %v", st, err)
	}
	must(t, f.Close())
	waitXattr(t, small, "user.mnemofs.sha256", shaHex(body))
	waitXattr(t, small, "user.mnemofs.tags", "pt")

	// A large file written sequentially with fsync, then more writes
	// after the fsync (the kernel writes the committed blob in place).
	big := filepath.Join(dir, "big.bin")
	content := make([]byte, 9<<20+123)
	for i := range content {
		content[i] = byte(i*31 + i>>12)
	}
	f, err = os.OpenFile(big, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	must(t, err)
	for off := 0; off < len(content); off += 1 << 20 {
		_, err := f.Write(content[off:min(off+1<<20, len(content))])
		must(t, err)
	}
	must(t, f.Sync())
	copy(content[100:], "overwritten after the fsync")
	_, err = f.WriteAt(content[100:127], 100)
	must(t, err)
	must(t, f.Close())
	if got, err := os.ReadFile(big); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("big file read back: %d bytes, %v", len(got), err)
	}
	waitXattr(t, big, "user.mnemofs.sha256", shaHex(content))

	// Appends to a file whose content is a blob, by a session that a
	// reader and an in-place writer join. A reader (tail -f) holds the
	// log open from the first append on: a session ends ptLinger after
	// its last close, and on a loaded machine one open of the 3,000 can
	// come later than that; the session after it would find the content
	// moved back into the KV, and append through the daemon.
	logp := filepath.Join(dir, "log.jsonl")
	var want []byte
	var tail *os.File
	for i := range 3000 {
		line := []byte(`{"n":` + string(rune('0'+i%10)) + `,"msg":"an event worth keeping"}` + "\n")
		want = append(want, line...)
		af, err := os.OpenFile(logp, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		must(t, err)
		if tail == nil {
			tail, err = os.Open(logp)
			must(t, err)
		}
		_, err = af.Write(line)
		must(t, err)
		must(t, af.Close())
	}
	af, err := os.OpenFile(logp, os.O_APPEND|os.O_WRONLY, 0o644)
	must(t, err)
	rw, err := os.OpenFile(logp, os.O_RDWR, 0)
	must(t, err)
	_, err = af.Write([]byte("tail\n"))
	must(t, err)
	want = append(want, "tail\n"...)
	_, err = rw.WriteAt([]byte("XX"), 3)
	must(t, err)
	copy(want[3:], "XX")
	must(t, rw.Truncate(int64(len(want)-1)))
	want = want[:len(want)-1]
	if st, err := os.Stat(logp); err != nil || st.Size() != int64(len(want)) {
		t.Fatalf("stat of the log: %v, %v, want size %d", st, err, len(want))
	}
	must(t, rw.Close())
	must(t, af.Close())
	must(t, tail.Close())
	if got, err := os.ReadFile(logp); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("log read back: %d bytes (want %d), %v", len(got), len(want), err)
	}
	waitXattr(t, logp, "user.mnemofs.sha256", shaHex(want))

	if kernelPassthrough() && latWrite.Summary().Count != writes0 {
		t.Errorf("%d writes reached the daemon; with passthrough the kernel writes the files", latWrite.Summary().Count-writes0)
	}

	// Pages cached by a read outside any session, then an append in a
	// session: once it is over, a read through the page cache sees it.
	cached := filepath.Join(dir, "cached.txt")
	old := bytes.Repeat([]byte("page cache "), 4000) // 44 KB: a blob
	must(t, os.WriteFile(cached, old, 0o644))
	time.Sleep(300 * time.Millisecond) // the session ends
	if got, err := os.ReadFile(cached); err != nil || !bytes.Equal(got, old) {
		t.Fatalf("first read: %d bytes, %v", len(got), err)
	}
	af, err = os.OpenFile(cached, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = af.Write([]byte("appended"))
	must(t, err)
	must(t, af.Close())
	time.Sleep(300 * time.Millisecond)
	if got, err := os.ReadFile(cached); err != nil || !bytes.Equal(got, append(old, "appended"...)) {
		t.Errorf("read after the append session: %d bytes (want %d), tail %q, %v", len(got), len(old)+8, got[max(0, len(got)-12):], err)
	}

	// mtime follows the kernel's writes; a time set after them stays.
	before, err := os.Stat(small)
	must(t, err)
	time.Sleep(20 * time.Millisecond)
	f, err = os.OpenFile(small, os.O_WRONLY|os.O_TRUNC, 0) // no session: through the daemon
	must(t, err)
	_, err = f.Write([]byte("v2\n"))
	must(t, err)
	st, err := f.Stat()
	must(t, err)
	if !st.ModTime().After(before.ModTime()) || st.Size() != 3 {
		t.Errorf("after a rewrite: mtime %v (before %v), size %d", st.ModTime(), before.ModTime(), st.Size())
	}
	set := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	must(t, os.Chtimes(small, set, set))
	must(t, f.Close())
	if st, err := os.Stat(small); err != nil || !st.ModTime().Equal(set) {
		t.Errorf("mtime after utimes and close: %v, %v; want %v", st.ModTime(), err, set)
	}

	// All of it durable and consistent after a remount.
	tf.unmount()
	tf = mountAt(t, data, store.Options{ScratchAge: -1})
	for p, w := range map[string][]byte{small: []byte("v2\n"), big: content, logp: want} {
		rel, _ := filepath.Rel(filepath.Dir(filepath.Dir(dir)), p)
		got, err := os.ReadFile(tf.path(rel))
		if err != nil || !bytes.Equal(got, w) {
			t.Errorf("%s after a remount: %d bytes, %v; want %d", rel, len(got), err, len(w))
		}
	}
	r, err := tf.st.Fsck(false)
	must(t, err)
	if len(r.Problems) > 0 {
		t.Errorf("fsck: %v", r.Problems)
	}
}

// TestPassthroughReads: a large file opened for reading only is read by
// the kernel from its blob file (no read reaches the daemon); a writer
// that opens it meanwhile joins the session and the reader sees its
// bytes; the record follows; a file of a versioned tree is read through
// the daemon, as its history needs.
func TestPassthroughReads(t *testing.T) {
	// Not parallel: it counts the reads that reach any daemon of this
	// process (latRead is the package's).
	needLocalFiles(t)
	tf := mountAt(t, t.TempDir(), store.Options{ScratchAge: -1})
	content := make([]byte, 3<<20+77)
	for i := range content {
		content[i] = byte(i*7 + i>>10)
	}
	big := tf.path("working/big.bin")
	kept := tf.path("semantic/big.bin")
	must(t, os.MkdirAll(filepath.Dir(big), 0o755))
	must(t, os.MkdirAll(filepath.Dir(kept), 0o755))
	must(t, os.WriteFile(big, content, 0o644))
	must(t, os.WriteFile(kept, content, 0o644))
	waitXattr(t, big, "user.mnemofs.sha256", shaHex(content))
	time.Sleep(300 * time.Millisecond) // the write sessions end

	reads0 := latRead.Summary().Count
	r, err := os.Open(big)
	must(t, err)
	got := make([]byte, len(content))
	if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("read of the large file: %v", err)
	}
	if n := latRead.Summary().Count - reads0; kernelPassthrough() && n != 0 {
		t.Errorf("%d reads reached the daemon; a large file opened for reading is read by the kernel", n)
	}
	// A writer joins the reader's session; the reader sees its bytes.
	w, err := os.OpenFile(big, os.O_RDWR, 0)
	must(t, err)
	_, err = w.WriteAt([]byte("changed while read"), 1000)
	must(t, err)
	copy(content[1000:], "changed while read")
	must(t, w.Close())
	if _, err := r.ReadAt(got[:4096], 0); err != nil || !bytes.Equal(got[:4096], content[:4096]) {
		t.Errorf("the reader does not see the writer's bytes: %q", got[1000:1018])
	}
	must(t, r.Close())
	waitXattr(t, big, "user.mnemofs.sha256", shaHex(content))
	time.Sleep(300 * time.Millisecond)
	if b, err := os.ReadFile(big); err != nil || !bytes.Equal(b, content) {
		t.Errorf("read after the session: %d bytes, %v", len(b), err)
	}

	reads0 = latRead.Summary().Count
	if b, err := os.ReadFile(kept); err != nil || len(b) != len(content) {
		t.Fatalf("read of the versioned file: %d bytes, %v", len(b), err)
	}
	if latRead.Summary().Count == reads0 {
		t.Errorf("no read of the versioned file reached the daemon: its history needs every change through it")
	}
	rep, err := tf.st.Fsck(false)
	must(t, err)
	if len(rep.Problems) > 0 {
		t.Errorf("fsck: %v", rep.Problems)
	}
}

// TestPassthroughTimesKept: times set on a file while it is still open
// from its writing (cp -a, cp -p, tar x set them before the close) stay
// once the kernel's writes are taken in, and after a remount; a write
// after them moves mtime on, as on a disk.
func TestPassthroughTimesKept(t *testing.T) {
	needLocalFiles(t)
	data := t.TempDir()
	tf := mountAt(t, data, store.Options{ScratchAge: -1})
	dir := tf.path("working/times")
	must(t, os.MkdirAll(dir, 0o755))
	set := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		data []byte
	}{{"small.txt", []byte("x\n")}, {"blob.txt", bytes.Repeat([]byte("big file "), 8000)}} {
		p := filepath.Join(dir, c.name)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		must(t, err)
		_, err = f.Write(c.data)
		must(t, err)
		must(t, unix.Futimes(int(f.Fd()), []unix.Timeval{unix.NsecToTimeval(set.UnixNano()), unix.NsecToTimeval(set.UnixNano())}))
		must(t, f.Close())
		time.Sleep(300 * time.Millisecond) // the session ends, its commit is done
		if st, err := os.Stat(p); err != nil || !st.ModTime().Equal(set) {
			t.Errorf("%s: mtime %v (%v) after the close, want %v", c.name, st.ModTime(), err, set)
		}
		// Reopened to append, the time set again before the close.
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		_, err = f.Write([]byte("more\n"))
		must(t, err)
		must(t, os.Chtimes(p, set, set))
		must(t, f.Close())
		time.Sleep(300 * time.Millisecond)
		if st, err := os.Stat(p); err != nil || !st.ModTime().Equal(set) {
			t.Errorf("%s: mtime %v (%v) after an append and a set time, want %v", c.name, st.ModTime(), err, set)
		}
	}
	tf.unmount()
	tf = mountAt(t, data, store.Options{ScratchAge: -1})
	for _, n := range []string{"small.txt", "blob.txt"} {
		if st, err := os.Stat(tf.path("working/times/" + n)); err != nil || !st.ModTime().Equal(set) {
			t.Errorf("%s after a remount: mtime %v (%v), want %v", n, st.ModTime(), err, set)
		}
	}
}

// TestTruncateSameSizeTimes: truncate to the size a file has marks its
// mtime and ctime, as ext4 does, and the new times survive a remount
// (they were once changed in memory only). No version is made.
func TestTruncateSameSizeTimes(t *testing.T) {
	data := t.TempDir()
	tf := mountAt(t, data, store.Options{})
	p := tf.path("working/same.txt")
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte("hi\n"), 0o644))
	st0, err := os.Stat(p)
	must(t, err)
	old := st0.ModTime()
	time.Sleep(1100 * time.Millisecond)      // the write's session is over, and the clock moved
	f, err := os.OpenFile(p, os.O_WRONLY, 0) // as truncate(1) does: ftruncate
	must(t, err)
	must(t, f.Truncate(3))
	must(t, f.Close())
	st, err := os.Stat(p)
	must(t, err)
	if !st.ModTime().After(old) {
		t.Fatalf("mtime %v after truncate to the same size, want now", st.ModTime())
	}
	want := st.ModTime()
	tf.unmount()
	tf = mountAt(t, data, store.Options{})
	if st, err := os.Stat(tf.path("working/same.txt")); err != nil || !st.ModTime().Equal(want) {
		t.Errorf("after a remount: mtime %v (%v), want %v", st.ModTime(), err, want)
	}
	if v := xattr(t, tf.path("working/same.txt"), "user.mnemofs.version"); v != "1" {
		t.Errorf("version %s after truncate to the same size, want 1", v)
	}
}
