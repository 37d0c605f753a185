package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestTeamRenameUnlinkRaces: two hosts change the same names at the same
// moment. For each file, host A renames it while host B removes it, and
// both hosts rename another file to names of their own. Exactly one of
// each pair of calls succeeds; the other fails (ENOENT), and afterwards
// both hosts list the same names, those the successful calls say, and
// fsck finds the store consistent. A chmod on one host and a rename on the
// other of a third file both hold.
func TestTeamRenameUnlinkRaces(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, 1)
	a, b := tm.host(t), tm.host(t)
	const n = 20
	dirA, dirB := filepath.Join(a.mnt, "working", "races"), filepath.Join(b.mnt, "working", "races")
	check(t, os.MkdirAll(dirA, 0o755))
	for i := range n {
		for _, p := range []string{"f", "h", "m"} {
			check(t, os.WriteFile(filepath.Join(dirA, fmt.Sprintf("%s%02d.md", p, i)), []byte(fmt.Sprintf("note %s%02d\n", p, i)), 0o644))
		}
	}
	within(t, 2*time.Second, "the files on B", func() bool { return len(sortedNames(dirB)) == 3*n })

	var renamed, removed, toA, toB [n]bool
	var chmods, moves [n]error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range n {
			renamed[i] = os.Rename(filepath.Join(dirA, fmt.Sprintf("f%02d.md", i)), filepath.Join(dirA, fmt.Sprintf("g%02d.md", i))) == nil
			toA[i] = os.Rename(filepath.Join(dirA, fmt.Sprintf("h%02d.md", i)), filepath.Join(dirA, fmt.Sprintf("ha%02d.md", i))) == nil
			chmods[i] = os.Chmod(filepath.Join(dirA, fmt.Sprintf("m%02d.md", i)), 0o600)
			if errors.Is(chmods[i], os.ErrNotExist) {
				// B's rename came first: the file is under its new name.
				chmods[i] = os.Chmod(filepath.Join(dirA, fmt.Sprintf("mb%02d.md", i)), 0o600)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := range n {
			removed[i] = os.Remove(filepath.Join(dirB, fmt.Sprintf("f%02d.md", i))) == nil
			toB[i] = os.Rename(filepath.Join(dirB, fmt.Sprintf("h%02d.md", i)), filepath.Join(dirB, fmt.Sprintf("hb%02d.md", i))) == nil
			moves[i] = os.Rename(filepath.Join(dirB, fmt.Sprintf("m%02d.md", i)), filepath.Join(dirB, fmt.Sprintf("mb%02d.md", i)))
		}
	}()
	wg.Wait()

	var want []string
	for i := range n {
		if renamed[i] == removed[i] {
			t.Errorf("f%02d: rename on A %v, remove on B %v: want exactly one to succeed", i, renamed[i], removed[i])
		}
		if toA[i] == toB[i] {
			t.Errorf("h%02d: rename on A %v, rename on B %v: want exactly one to succeed", i, toA[i], toB[i])
		}
		if renamed[i] {
			want = append(want, fmt.Sprintf("g%02d.md", i))
		}
		if toA[i] {
			want = append(want, fmt.Sprintf("ha%02d.md", i))
		}
		if toB[i] {
			want = append(want, fmt.Sprintf("hb%02d.md", i))
		}
		if chmods[i] != nil || moves[i] != nil {
			t.Errorf("m%02d: chmod on A: %v, rename on B: %v", i, chmods[i], moves[i])
		}
		want = append(want, fmt.Sprintf("mb%02d.md", i))
	}
	slices.Sort(want)
	var onA, onB []string
	if d := within(t, 2*time.Second, "both hosts list what the calls said", func() bool {
		onA, onB = sortedNames(dirA), sortedNames(dirB)
		return slices.Equal(onA, want) && slices.Equal(onB, want)
	}); t.Failed() {
		t.Logf("want %q\nA    %q\nB    %q (%v)", want, onA, onB, d)
	}
	for _, name := range want {
		got, err := os.ReadFile(filepath.Join(dirB, name))
		if err != nil || len(got) == 0 {
			t.Errorf("%s on B: %q, %v", name, got, err)
		}
	}
	for i := range n {
		name := fmt.Sprintf("mb%02d.md", i)
		within(t, 2*time.Second, name+" is 0600 on both hosts", func() bool {
			for _, d := range []string{dirA, dirB} {
				if st, err := os.Stat(filepath.Join(d, name)); err != nil || st.Mode().Perm() != 0o600 {
					return false
				}
			}
			return true
		})
	}
	fsckClean(t, a.data, "after the races")
}
