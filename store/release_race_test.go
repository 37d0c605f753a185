package store

import (
	"bytes"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// TestReleaseCommitsNextOpensHalfRewrite: a Release that dropped the
// last reference commits nothing that an Open joining the file after it
// wrote. The interleaving (two hosts on one etcd, as in
// TestTeamRewritersLeaveOneWholeVersion/large, which it failed
// intermittently under load): host A's release of one os.WriteFile handle
// takes the last reference and is delayed before its commit takes f.mu;
// the next os.WriteFile's open joins the same open state, truncates and
// writes 2 MiB (the second write spills); only then does the release's
// commit run. Before the fix it committed the half-written rewrite and
// left f append-only at 2 MiB, so the third write (at 2 MiB) was an
// "append":
//
//   - "rebased": host B's whole rewrite commits after that third write; A's
//     close rebases its "append" onto B's version: 2,600,000 + 502,848 =
//     3,102,848 bytes, starting with B's bytes.
//   - "mixed": B's rewrite reaches A (watch) before the third write; A's
//     f restarts on B's version and its close writes its last chunks into
//     B's: 2,600,000 bytes, half B, half A.
func TestReleaseCommitsNextOpensHalfRewrite(t *testing.T) {
	t.Parallel()
	c := testetcd.Shared(t)
	const size = 2600000 // as the e2e test: 1 MiB + 1 MiB + 502848
	for _, mode := range []string{"rebased", "mixed"} {
		t.Run(mode, func(t *testing.T) {
			prefix := testetcd.Prefix(t)
			a, _ := openEtcdStore(t, c, prefix)
			b, _ := openEtcdStore(t, c, prefix)
			ino := writeFile(t, a, RootIno, "plan-large.md", content(0, size))
			if _, err := waitRead(b, ino, size); err != nil {
				t.Fatal(err)
			}
			va, vb := content(1, size), content(2, size)

			// Handle #3 of A: open (its writes were flushed already).
			must(t, a.Open(ino, false))
			f := a.openState(ino)
			f.mu.Lock() // the Release below stops before its commit takes f.mu
			released := make(chan error, 1)
			go func() { released <- a.Release(ino) }()
			for {
				a.filesMu.Lock()
				r := f.refs
				a.filesMu.Unlock()
				if r == 0 {
					break
				}
				time.Sleep(time.Millisecond)
			}
			// OPEN #4 joins f; SETATTR(0); WRITE 1 MiB; WRITE 1 MiB (spill).
			must(t, a.Open(ino, false))
			i, err := a.inode(ino)
			must(t, err)
			must(t, a.truncateLocked(f, i, 0))
			for off := 0; off < 2<<20; off += 1 << 20 {
				if _, err := a.writeLocked(f, va[off:off+1<<20], int64(off), false); err != nil {
					t.Fatal(err)
				}
			}
			f.mu.Unlock()
			must(t, <-released) // handle #3's release commits what #4 wrote so far

			third := func() {
				if _, err := a.WriteAt(ino, va[2<<20:], 2<<20); err != nil {
					t.Fatal(err)
				}
			}
			if mode == "rebased" {
				third()
				must(t, rewriteBig(t, b, ino, vb))
			} else {
				must(t, rewriteBig(t, b, ino, vb))
				// (With the fix, A's f holds its half rewrite, so A reads
				// its own bytes: give the watch a moment and go on.)
				deadline := time.Now().Add(time.Second)
				for !bytes.Equal(readAll(t, a, ino), vb) && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond) // A's watch brings B's version
				}
				third()
			}
			must(t, a.Release(ino)) // #4's flush/release

			for h, s := range []*Store{a, b} {
				var got []byte
				deadline := time.Now().Add(5 * time.Second)
				for {
					got = readAll(t, s, ino)
					if bytes.Equal(got, va) || bytes.Equal(got, vb) || time.Now().After(deadline) {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				if !bytes.Equal(got, va) && !bytes.Equal(got, vb) {
					half := "neither"
					switch {
					case len(got) >= 2<<20 && bytes.Equal(got[:2<<20], vb[:2<<20]):
						half = "B's"
					case len(got) >= 2<<20 && bytes.Equal(got[:2<<20], va[:2<<20]):
						half = "A's"
					}
					t.Fatalf("host %d: the file is no one's version (%d bytes; first 2 MiB %s)", h, len(got), half)
				}
			}
		})
	}
}
