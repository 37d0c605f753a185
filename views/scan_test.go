package views

import (
	"fmt"
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
	scanned := b.e.scanned.Load()
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
