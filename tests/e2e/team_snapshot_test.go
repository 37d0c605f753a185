package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTeamIndexSnapshot: on a store shared by hosts (etcd), a host keeps
// its index in a snapshot of its own too. Host A writes snapshots (every
// 200 ms here) while host B changes the memories, is killed in the middle
// of B's changes, and B goes on while A is down. A's next mount starts
// from its snapshot and catches up; every search on A then answers
// exactly as on a new host, which builds its index from the store, query
// by query. A snapshot that claimed a version whose changes from B had
// not all reached A would keep them missed.
func TestTeamIndexSnapshot(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, 1)
	env := []string{"MNEMOFS_SNAPSHOT_EVERY=200ms"}
	dataA, mntA := t.TempDir(), t.TempDir()
	a := startMountEnv(t, env, dataA, mntA, "--backend", tm.backend)
	b := tm.host(t)
	rng := rand.New(rand.NewPCG(crashSeed(t), 23))
	text := func(i int) string {
		return fmt.Sprintf("---\nuser: %s\ntags: [t%d]\n---\nnote %d: %s %s %s\n", []string{"alice", "bob", "carol"}[i%3], i%4,
			i, snapWords[rng.IntN(len(snapWords))], snapWords[rng.IntN(len(snapWords))], snapWords[i%len(snapWords)])
	}
	dir := func(i int) string { return filepath.Join(b.mnt, "episodic", fmt.Sprintf("d%d", i%4)) }
	for i := range 120 {
		check(t, os.MkdirAll(dir(i), 0o755))
		check(t, os.WriteFile(filepath.Join(dir(i), fmt.Sprintf("n%03d.md", i)), []byte(text(i)), 0o644))
	}
	snap := filepath.Join(dataA, "index", "views.snap")
	within(t, 20*time.Second, "A's first snapshot", func() bool { return exists(snap) })
	ops := []func(i int){
		func(i int) {
			os.WriteFile(filepath.Join(dir(i), fmt.Sprintf("n%03d.md", rng.IntN(120))), []byte(text(1000+i)), 0o644)
		},
		func(i int) { os.Remove(filepath.Join(dir(i), fmt.Sprintf("n%03d.md", rng.IntN(120)))) },
		func(i int) {
			os.Rename(filepath.Join(dir(i), fmt.Sprintf("n%03d.md", rng.IntN(120))), filepath.Join(dir(i), fmt.Sprintf("moved%03d.md", i)))
		},
		func(i int) {
			os.WriteFile(filepath.Join(dir(i), fmt.Sprintf("k%03d.md", i)), []byte(text(2000+i)), 0o644)
		},
	}
	change := func(from, to int) {
		for i := from; i < to; i++ {
			ops[rng.IntN(len(ops))](i)
			if rng.IntN(6) == 0 {
				time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond) // A's snapshots meanwhile
			}
		}
	}
	change(0, 150)
	a.kill(t)
	clearDeadMount(t, mntA)
	change(150, 220)
	a = startMountEnv(t, env, dataA, mntA, "--backend", tm.backend)
	got := searchAll(t, dataA)
	a.stop(t, syscall.SIGTERM)
	if !strings.Contains(a.stderr.String()+a.stdout.String(), "from its snapshot") {
		t.Fatalf("A's mount after the kill did not start from its snapshot\nstderr: %s", a.stderr.String())
	}
	for _, l := range strings.Split(a.stderr.String(), "\n") {
		if strings.Contains(l, "from its snapshot") {
			t.Log(l)
		}
	}
	c := tm.host(t) // a new host: its index built from the store
	want := searchAll(t, c.data)
	if strings.Contains(c.stderr.String(), "from its snapshot") {
		t.Fatalf("the new host read a snapshot\nstderr: %s", c.stderr.String())
	}
	sameSearches(t, got, want, "on A, from its snapshot", "a new host's build")
}
