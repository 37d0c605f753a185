package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrashDuringInPlaceRewrite: a large file of an in-place tree
// (working/) rewritten while a reader holds it open (with FUSE passthrough
// the writer joins the reader's session and the kernel writes the content
// file in place), the mount killed before the writer closes: the store
// comes back consistent (fsck), its record agreeing with the content
// (size and sha256), which is the old content or what the writer wrote so
// far, never a file longer than its bytes.
func TestCrashDuringInPlaceRewrite(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := filepath.Join(mnt, "working/big.bin")
	old := make([]byte, 3<<20)
	rand.Read(old)
	for _, trunc := range []bool{true, false} {
		m := startMount(t, data, mnt)
		check(t, os.MkdirAll(filepath.Dir(p), 0o755))
		f, err := os.Create(p)
		check(t, err)
		_, err = f.Write(old)
		check(t, err)
		check(t, f.Sync())
		check(t, f.Close())
		time.Sleep(time.Second) // the session ends
		r, err := os.Open(p)    // a reader: a read session, with passthrough
		check(t, err)
		flags := os.O_WRONLY
		if trunc {
			flags |= os.O_TRUNC
		}
		w, err := os.OpenFile(p, flags, 0)
		check(t, err)
		_, err = w.Write(bytes.Repeat([]byte("new"), 1000))
		check(t, err)
		m.kill(t)
		r.Close()
		w.Close()
		clearDeadMount(t, mnt)
		if out := mustRun(t, "fsck", "--data", data); !strings.Contains(out.stdout, "consistent") {
			t.Errorf("trunc %v: fsck after the kill: %s%s", trunc, out.stdout, out.stderr)
		}
		m = startMount(t, data, mnt)
		got, err := os.ReadFile(p)
		check(t, err)
		sum := sha256.Sum256(got)
		if x, _ := getxattr(p, "user.mnemofs.sha256"); x != hex.EncodeToString(sum[:]) {
			t.Errorf("trunc %v: the record's sha256 %s, the content's %x", trunc, x, sum)
		}
		wrote := bytes.Repeat([]byte("new"), 1000)
		switch {
		case bytes.Equal(got, old):
		case trunc && bytes.Equal(got, wrote):
		case !trunc && bytes.Equal(got, append(wrote, old[len(wrote):]...)):
		default:
			t.Errorf("trunc %v: after the kill the file is %d bytes, starting %q: neither the old content nor what was written", trunc, len(got), got[:min(len(got), 16)])
		}
		m.stop(t, syscall.SIGTERM)
	}
}
