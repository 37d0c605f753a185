package views

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestScannedBuild: a build that reads the memories by range scans
// (store.ScanMemories: blocks of inodes, records and chunks) gives the
// catalog, views and searches that indexing each memory as it was
// written gave, over memories of every shape a scan meets: blocks of
// many small files, a file of several chunks, one past the indexed
// limit, an empty and a binary file, a log, gaps left by removals,
// renames, and an archived directory.
func TestScannedBuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := openSession(t, dir, "", "")
	for i := range 1300 { // three blocks and more
		user := []string{"alice", "bob", "carol"}[i%3]
		a.write(t, fmt.Sprintf("/episodic/d%d/n%04d.md", i%4, i), frontText(user, fmt.Sprintf("t%d", i%5),
			fmt.Sprintf("note %d about the river %d and the mountain lake, memory %d", i, i%17, i*7)))
	}
	// Several chunks, a word in the last one.
	a.write(t, "/semantic/long.md", strings.Repeat("filler words of a long note\n", 4000)+"the zebrafinch sings at the end\n")
	// Past the indexed limit: a word before it and one after.
	big := []byte("kingfisher at the start\n" + strings.Repeat("x", indexMax) + "\nnightjar past the limit\n")
	a.write(t, "/semantic/huge.txt", string(big))
	a.write(t, "/semantic/empty.md", "")
	a.write(t, "/semantic/image.bin", "\x00\x01\x02binary heron\x00")
	a.write(t, "/episodic/s1/turns.jsonl", `{"user":"alice","speaker":"alice","text":"first turn by alice about the river","created":"2024-01-02T10:00:00Z"}`+"\n"+
		`{"user":"bob","speaker":"bob","text":"bob plans a trip to the lake","created":"2024-01-03T10:00:00Z"}`+"\n")
	for i := 100; i < 160; i++ {
		if _, err := a.st.Remove(a.lookup(t, fmt.Sprintf("/episodic/d%d", i%4)), fmt.Sprintf("n%04d.md", i)); err != nil {
			t.Fatal(err)
		}
	}
	a.rename(t, "/episodic/d1/n0201.md", "/episodic/d2/renamed.md")
	a.rename(t, "/episodic/d3", "/archive/d3")
	a.write(t, "/episodic/late.md", frontText("dave", "late", "a late arrival by the river"))
	queries := []string{"zebrafinch", "kingfisher", "nightjar", "heron", "river 3", "mountain lake memory", "bob plans", "late arrival", "note 1299"}
	live := a.view(t)
	liveHits := searchAll(t, a.e, queries)
	a.close(t)

	b := openSession(t, dir, "", "") // no snapshot: built from the store
	built := b.view(t)
	builtHits := searchAll(t, b.e, queries)
	scanned := b.e.ix.scanned.Load()
	b.close(t)

	if n := len(built.Entries); scanned < int64(n)-2 {
		t.Errorf("the build read %d of %d memories by scans", scanned, n)
	}
	sameView(t, built, live)
	if !reflect.DeepEqual(builtHits, liveHits) {
		t.Errorf("searches after the build:\n got %q\nwant %q", builtHits, liveHits)
	}
	for _, q := range []string{"zebrafinch", "kingfisher", "bob plans", "note 1299"} {
		if len(builtHits[q]) == 0 {
			t.Errorf("search %q found nothing", q)
		}
	}
	if len(builtHits["nightjar"]) != 0 {
		t.Errorf("a word past the indexed limit was found: %q", builtHits["nightjar"])
	}
}

func searchAll(t *testing.T, e *Engine, queries []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, text := range queries {
		q, err := ParseQuery(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range e.Search(q, Filter{}) {
			out[text] = append(out[text], fmt.Sprintf("%s#%d %.9f", r.Path, r.Line, r.Score))
		}
	}
	return out
}

// TestScannedBuildUsers: on a store opened for everyone and on one opened
// for a user, a build from scans gives what a build reading each memory
// as a change would gives: the user's memories, not the others', and of a
// log shared by two users only her lines (a log the scans leave to the
// usual reads). Not parallel: it sets testNoScan.
func TestScannedBuildUsers(t *testing.T) {
	dir := t.TempDir()
	a := openSession(t, dir, "-", "") // no engine: the builds below read it all
	for i := range 700 {
		user := []string{"alice", "bob"}[i%2]
		a.write(t, fmt.Sprintf("/episodic/d%d/n%04d.md", i%3, i), frontText(user, fmt.Sprintf("t%d", i%4),
			fmt.Sprintf("note %d of %s about the river %d", i, user, i%13)))
	}
	a.write(t, "/episodic/nobody.md", "a note with no user about the river\n")
	a.write(t, "/episodic/s1/turns.jsonl", `{"user":"alice","speaker":"alice","text":"alice sails down the river","created":"2024-01-02T10:00:00Z"}`+"\n"+
		`{"user":"bob","speaker":"bob","text":"bob plans a secret trip","created":"2024-01-03T10:00:00Z"}`+"\n")
	a.write(t, "/episodic/s2/turns.jsonl", `{"user":"alice","speaker":"alice","text":"alice alone by the lake","created":"2024-01-04T10:00:00Z"}`+"\n")
	a.close(t)
	queries := []string{"river", "note of bob", "note of alice", "secret trip", "sails", "alone lake", "t2"}
	for _, user := range []string{"", "alice"} {
		testNoScan.Store(true)
		ref := openSession(t, dir, "", user)
		want, wantHits := ref.view(t), searchAll(t, ref.e, queries)
		ref.close(t)
		testNoScan.Store(false)
		b := openSession(t, dir, "", user)
		got, gotHits := b.view(t), searchAll(t, b.e, queries)
		scanned := b.e.ix.scanned.Load()
		b.close(t)
		if scanned < 300 {
			t.Errorf("user %q: %d memories read by scans", user, scanned)
		}
		sameView(t, got, want)
		if !reflect.DeepEqual(gotHits, wantHits) {
			t.Errorf("user %q: searches after the build:\n got %q\nwant %q", user, gotHits, wantHits)
		}
		if user == "alice" {
			if n := len(got.Entries); n < 350 || n > 354 {
				t.Errorf("alice's catalog holds %d memories, want her 350 and the shared ones", n)
			}
			if len(gotHits["secret trip"]) != 0 {
				t.Errorf("alice's search shows bob's line: %q", gotHits["secret trip"])
			}
			for q, hits := range gotHits {
				for _, h := range hits {
					var i int
					if _, err := fmt.Sscanf(h[strings.LastIndex(h, "/n")+2:], "%04d.md", &i); err == nil && i%2 == 1 {
						t.Errorf("alice's search %q shows bob's note %s", q, h)
					}
				}
			}
			if len(gotHits["sails"]) == 0 {
				t.Error("alice's own line of the shared log is not found")
			}
		}
	}
}

// TestSnapshotMostlyStale: a snapshot most of whose store changed since
// (a large import after it) is not brought up to date change by change:
// the start builds by scans, and gives what a build gives.
func TestSnapshotMostlyStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	snap := filepath.Join(dir, "index", "views.snap")
	a := openSession(t, dir, snap, "")
	for i := range 20 {
		a.write(t, fmt.Sprintf("/episodic/old/n%02d.md", i), frontText("alice", "old", fmt.Sprintf("an old note %d about the river", i)))
	}
	a.view(t)
	a.close(t)
	b := openSession(t, dir, "-", "") // no engine: an import, as it were
	for i := range staleFloor + 100 {
		b.write(t, fmt.Sprintf("/episodic/new%d/n%05d.md", i%8, i), frontText("bob", "new", fmt.Sprintf("a new note %d about the lake", i)))
	}
	b.close(t)
	c := openSession(t, dir, snap, "")
	got := c.view(t)
	c.close(t)
	if log := c.log.String(); !strings.Contains(log, "a build is faster") || strings.Contains(log, "from its snapshot") {
		t.Errorf("a mostly stale snapshot was used:\n%s", log)
	}
	d := openSession(t, dir, "", "")
	want := d.view(t)
	d.close(t)
	sameView(t, got, want)
	if len(got.Entries) != 20+staleFloor+100 {
		t.Errorf("%d memories in the catalog, want %d", len(got.Entries), 20+staleFloor+100)
	}
}
