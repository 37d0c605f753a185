package views

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

// TestReaderSeesWhatItsUserSees: an engine on a store open for every
// user, read for alice through her view (ForReader): search, snippets,
// context/ (its relevant part and its working/ part) and the stats find
// and show nothing of bob's, of a shared log only alice's and public
// lines, while the engine read for every user finds them all.
func TestReaderSeesWhatItsUserSees(t *testing.T) {
	e, st := engineStore(t)
	working, err := st.Lookup(store.RootIno, "working")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, st, store.RootIno, "bob.md", "---\nuser: bob\n---\nzanzibar is bob's\n")
	writeFile(t, st, store.RootIno, "alice.md", "---\nuser: alice\n---\nzanzibar is alice's\n")
	writeFile(t, st, working.Ino, "turns.jsonl", `{"user":"alice","text":"quokka alice says hi"}
{"user":"bob","text":"quokka bob whispers"}
{"text":"quokka for the public"}
`)
	e.Ready()
	v, err := st.ForUser("alice")
	if err != nil {
		t.Fatal(err)
	}
	f := ForReader(v)
	search := func(text string, scope Filter) []string {
		q, err := ParseQuery(text)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range e.WithSnippetsFor(q, e.Search(q, scope), scope) {
			out = append(out, r.Path+" "+r.Snippet)
		}
		return out
	}
	if got := search("zanzibar", f); len(got) != 1 || !strings.HasPrefix(got[0], "/alice.md") {
		t.Errorf("alice's search for zanzibar: %q, want alice.md alone", got)
	}
	got := strings.Join(search("quokka", f), "\n")
	if strings.Contains(got, "bob") || !strings.Contains(got, "quokka alice says hi") || !strings.Contains(got, "quokka for the public") {
		t.Errorf("alice's search for quokka:\n%s\nwant her line and the public one, nothing of bob's", got)
	}
	if all := strings.Join(search("quokka", Filter{}), "\n"); !strings.Contains(all, "bob whispers") {
		t.Errorf("the search for every user misses bob's line:\n%s", all)
	}

	q, _ := ParseQuery("quokka zanzibar")
	ctx, err := e.ContextCtx(context.Background(), q, f)
	if err != nil {
		t.Fatal(err)
	}
	if c := string(ctx); strings.Contains(c, "bob") || !strings.Contains(c, "quokka alice says hi") || !strings.Contains(c, "zanzibar is alice's") {
		t.Errorf("alice's context/ shows bob's text or misses hers:\n%s", c)
	}
	q, _ = ParseQuery("nothingmatches")
	ctx, _ = e.ContextCtx(context.Background(), q, f)
	if c := string(ctx); strings.Contains(c, "bob") || !strings.Contains(c, "quokka for the public") {
		t.Errorf("alice's working/ part of context/ shows bob's line or misses the public one:\n%s", c)
	}

	b, err := e.StatsJSONFor(v)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Memories int    `json:"memories"`
		Bytes    uint64 `json:"bytes"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	aliceBytes := len("---\nuser: alice\n---\nzanzibar is alice's\n") + len(`{"user":"alice","text":"quokka alice says hi"}`+"\n"+`{"text":"quokka for the public"}`+"\n")
	if s.Memories != 2 || s.Bytes != uint64(aliceBytes) {
		t.Errorf("alice's stats: %d memories, %d bytes; want 2 and %d (the log by the lines she sees)", s.Memories, s.Bytes, aliceBytes)
	}
}
