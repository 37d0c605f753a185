package views

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSwapAfterBuild: after a build from the store, the first snapshot
// written is swapped in (the catalog and index then read from the mapped
// file); the engine answers as a build does, before and after more
// changes.
func TestSwapAfterBuild(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "index", "views.snap")
	a := openSession(t, dir, "-", "")
	for i := range 40 {
		user := []string{"alice", "bob"}[i%2]
		a.write(t, fmt.Sprintf("/episodic/notes/n%02d.md", i), frontText(user, fmt.Sprintf("t%d", i%3), fmt.Sprintf("note %d about the river and the mountain lake, memory %d", i, i)))
	}
	a.write(t, "/episodic/deep/one/two.md", frontText("bob", "deep", "archived thoughts of bob"))
	a.write(t, "/episodic/s1/turns.jsonl", `{"user":"alice","speaker":"alice","text":"first turn by alice about the river","created":"2024-01-02T10:00:00Z"}`+"\n"+
		`{"user":"bob","speaker":"bob","text":"bob plans a trip","created":"2024-01-03T10:00:00Z"}`+"\n")
	a.close(t)

	b := openSession(t, dir, snap, "") // builds, writes the snapshot, swaps it in
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(b.log.String(), "now read from the snapshot") {
		if time.Now().After(deadline) {
			b.close(t)
			t.Fatalf("no swap after the build; the log:\n%s", b.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.e.Ready()
	b.e.cat.mu.RLock()
	swapped := b.e.cat.ents.base != nil && len(b.e.cat.ents.over) == 0
	b.e.cat.mu.RUnlock()
	if !swapped {
		t.Fatal("the log says swapped, the catalog is not read from the snapshot")
	}
	got := b.view(t)
	b.write(t, "/episodic/notes/n03.md", frontText("carol", "t9", "rewritten words by carol"))
	b.rename(t, "/episodic/deep", "/archive/deep")
	b.append(t, "/episodic/s1/turns.jsonl", `{"user":"carol","speaker":"carol","text":"an appended line by carol","created":"2024-02-01T10:00:00Z"}`+"\n")
	b.write(t, "/episodic/fresh/new.md", frontText("dave", "new", "a fresh arrival"))
	got2 := b.view(t)
	b.close(t)

	d := openSession(t, dir, "", "") // no snapshot: a build from the store
	want2 := d.view(t)
	d.close(t)
	sameView(t, got2, want2)
	for _, q := range []string{"rewritten words", "appended line", "fresh arrival"} {
		if len(got2.Results[q]) == 0 {
			t.Errorf("search %q found nothing after the swap", q)
		}
	}
	if len(got.Results["river"]) == 0 || len(got.Entries) != 42 {
		t.Errorf("right after the swap: %d entries, river %v", len(got.Entries), got.Results["river"])
	}
}
