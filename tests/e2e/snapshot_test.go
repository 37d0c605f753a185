package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// snapWords are the words the memories of the snapshot tests are made of,
// and their queries.
var snapWords = []string{"river", "harbor", "lantern", "meadow", "glacier", "orchard", "canyon", "ember", "willow", "quartz"}

// searchAll asks every query of snapWords (alone and in pairs) through
// the running mount and returns the ranked paths and scores.
func searchAll(t *testing.T, data string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	var qs []string
	for i, w := range snapWords {
		qs = append(qs, w, w+" "+snapWords[(i+3)%len(snapWords)])
	}
	for _, q := range append(qs, "note", "turn by carol") {
		r := mustRun(t, "search", "--data", data, "--json", "-k", "20", q)
		var rs []struct {
			Path  string  `json:"path"`
			Line  uint32  `json:"line"`
			Score float64 `json:"score"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rs); err != nil {
			t.Fatalf("search %q: %v\n%s", q, err, r.stdout)
		}
		for _, x := range rs {
			out[q] = append(out[q], fmt.Sprintf("%s:%d %.6f", x.Path, x.Line, x.Score))
		}
	}
	return out
}

// TestIndexSnapshotAfterKill: a mount keeps its index in a snapshot
// (written every 200 ms here while memories change) and is killed with
// SIGKILL in the middle of a stream of changes of every kind. The next
// mount starts from the snapshot and catches up with the store; every
// search then answers exactly as after `fsck --reindex` (a build from the
// store), query by query.
func TestIndexSnapshotAfterKill(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	env := []string{"MNEMOFS_SNAPSHOT_EVERY=200ms"}
	rng := rand.New(rand.NewPCG(crashSeed(t), 11))
	text := func(i int) string {
		return fmt.Sprintf("---\nuser: %s\ntags: [t%d]\n---\nnote %d: %s %s %s\n", []string{"alice", "bob", "carol"}[i%3], i%4,
			i, snapWords[rng.IntN(len(snapWords))], snapWords[rng.IntN(len(snapWords))], snapWords[i%len(snapWords)])
	}
	m := startMountEnv(t, env, data, mnt)
	for i := range 150 {
		p := filepath.Join(mnt, "episodic", fmt.Sprintf("d%d", i%5), fmt.Sprintf("n%03d.md", i))
		check(t, os.MkdirAll(filepath.Dir(p), 0o755))
		check(t, os.WriteFile(p, []byte(text(i)), 0o644))
	}
	logPath := filepath.Join(mnt, "episodic", "s1", "turns.jsonl")
	check(t, os.MkdirAll(filepath.Dir(logPath), 0o755))
	check(t, os.WriteFile(logPath, []byte(`{"user":"alice","text":"first turn about the river"}`+"\n"), 0o644))
	snap := filepath.Join(data, "index", "views.snap")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(snap); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no index snapshot 20 s after the writes\nstderr: %s", m.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The changes, killed part way: rewrites, removals, renames, new
	// files, appends, a directory moved into /archive.
	ops := []func(i int){
		func(i int) { // rewrite
			os.WriteFile(filepath.Join(mnt, "episodic", fmt.Sprintf("d%d", i%5), fmt.Sprintf("n%03d.md", rng.IntN(150))), []byte(text(1000+i)), 0o644)
		},
		func(i int) {
			os.Remove(filepath.Join(mnt, "episodic", fmt.Sprintf("d%d", i%5), fmt.Sprintf("n%03d.md", rng.IntN(150))))
		},
		func(i int) {
			d := filepath.Join(mnt, "episodic", fmt.Sprintf("d%d", i%5))
			os.Rename(filepath.Join(d, fmt.Sprintf("n%03d.md", rng.IntN(150))), filepath.Join(d, fmt.Sprintf("moved%03d.md", i)))
		},
		func(i int) {
			p := filepath.Join(mnt, "episodic", "new", fmt.Sprintf("k%03d.md", i))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(text(2000+i)), 0o644)
		},
		func(i int) {
			f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				fmt.Fprintf(f, `{"user":"carol","text":"turn by carol %d about the %s"}`+"\n", i, snapWords[i%len(snapWords)])
				f.Close()
			}
		},
	}
	total := 200 + rng.IntN(200)
	for i := range total {
		ops[rng.IntN(len(ops))](i)
		if i == total/2 {
			os.Rename(filepath.Join(mnt, "episodic", "d4"), filepath.Join(mnt, "archive", "d4"))
		}
		if rng.IntN(8) == 0 {
			time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // let snapshots be written meanwhile
		}
	}
	m.kill(t)
	clearDeadMount(t, mnt)

	m = startMountEnv(t, env, data, mnt)
	got := searchAll(t, data)
	m.stop(t, syscall.SIGTERM)
	if !strings.Contains(m.stderr.String()+m.stdout.String(), "from its snapshot") {
		t.Fatalf("the mount after the kill did not start from the snapshot\nstderr: %s", m.stderr.String())
	}
	r := mustRun(t, "fsck", "--data", data, "--reindex")
	if _, err := os.Stat(snap); err == nil {
		t.Fatalf("fsck --reindex left the snapshot: %s", r.stdout)
	}
	m = startMountEnv(t, env, data, mnt)
	want := searchAll(t, data)
	m.stop(t, syscall.SIGTERM)
	if strings.Contains(m.stderr.String(), "from its snapshot") {
		t.Fatalf("the mount after fsck --reindex read a snapshot\nstderr: %s", m.stderr.String())
	}
	sameSearches(t, got, want, "after the kill", "a build from the store")
}

// sameSearches fails t unless every search of want (searchAll's) answered
// the same in got, and some found something.
func sameSearches(t *testing.T, got, want map[string][]string, gotWhat, wantWhat string) {
	t.Helper()
	n := 0
	for q, w := range want {
		n += len(w)
		if !reflect.DeepEqual(got[q], w) {
			t.Errorf("search %q %s:\n got %q\nwant %q (%s)", q, gotWhat, got[q], w, wantWhat)
		}
	}
	if n == 0 {
		t.Fatal("no search found anything: the test tests nothing")
	}
}
