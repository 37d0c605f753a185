package views

import (
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

// A removed memory is forgotten: archived:true (which finds what
// maintenance archived) leaves the trash out; only a path: within the
// trash finds it there.
func TestArchivedLeavesTheTrashOut(t *testing.T) {
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(nil)
	st, err := store.Open(kv, store.Options{OnChange: e.Handle, ScratchAge: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(st)
	t.Cleanup(func() { e.Stop(); st.Close(); kv.Close() })
	sem, _ := st.Lookup(store.RootIno, "semantic")
	arch, _ := st.Lookup(store.RootIno, "archive")
	old, err := st.Mkdir(arch.Ino, "scratchpads", 0o755, store.Owner{})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, st, sem.Ino, "gone.md", "flamingo pink, forgotten\n")
	writeFile(t, st, old.Ino, "kept.md", "flamingo pink, archived\n")
	if _, err := st.Remove(sem.Ino, "gone.md"); err != nil {
		t.Fatal(err)
	}
	paths := func(q string) []string {
		t.Helper()
		pq, err := ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range e.Search(pq, Filter{}) {
			out = append(out, r.Path)
		}
		return out
	}
	if got := paths("flamingo"); len(got) != 0 {
		t.Errorf("flamingo: %q", got)
	}
	if got := paths("flamingo archived:true"); len(got) != 1 || got[0] != "/archive/scratchpads/kept.md" {
		t.Errorf("flamingo archived:true: %q, want the archived one alone", got)
	}
	if got := paths("flamingo archived:true path:archive/trash"); len(got) != 1 || got[0] != "/archive/trash/semantic/gone.md" {
		t.Errorf("flamingo archived:true path:archive/trash: %q", got)
	}
	if got := paths("flamingo archived:true user:nobody"); len(got) != 0 {
		t.Errorf("with a filter that reads the entry: %q", got)
	}
}
