package views

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

// session is one start of a store on disk in dir: its KV, the store and,
// unless snap is "-", an engine (keeping its snapshot at snap when not
// empty). close stops them in the mount's order.
type session struct {
	kv  backend.KV
	st  *store.Store
	e   *Engine
	log *lockedBuf
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func openSession(t *testing.T, dir, snap string, user string) *session {
	t.Helper()
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{kv: kv, log: &lockedBuf{}}
	opts := store.Options{User: user}
	if snap != "-" {
		s.e = NewEngine(log.New(s.log, "", 0))
		if snap != "" {
			s.e.SetSnapshot(snap, true, 0)
		}
		opts.OnChange = s.e.Handle
	}
	if s.st, err = store.Open(kv, opts); err != nil {
		kv.Close()
		t.Fatal(err)
	}
	if s.e != nil {
		s.e.Start(s.st)
		s.e.Ready()
	}
	return s
}

func (s *session) close(t *testing.T) {
	t.Helper()
	if s.e != nil {
		s.e.Stop()
	}
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.kv.Close(); err != nil {
		t.Fatal(err)
	}
}

// write creates or rewrites the file at p (directories made as needed).
func (s *session) write(t *testing.T, p, text string) {
	t.Helper()
	dir, name := filepath.Split(p)
	if err := s.st.WriteNew("/"+strings.Trim(dir, "/"), name, []byte(text), ""); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

func (s *session) lookup(t *testing.T, p string) uint64 {
	t.Helper()
	ino := uint64(store.RootIno)
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		in, err := s.st.Lookup(ino, name)
		if err != nil {
			t.Fatalf("lookup %s: %v", p, err)
		}
		ino = in.Ino
	}
	return ino
}

func (s *session) append(t *testing.T, p, text string) {
	t.Helper()
	ino := s.lookup(t, p)
	if err := s.st.Open(ino, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.st.Append(ino, []byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := s.st.Release(ino); err != nil {
		t.Fatal(err)
	}
}

func (s *session) rename(t *testing.T, from, to string) {
	t.Helper()
	fd, fn := filepath.Split(from)
	td, tn := filepath.Split(to)
	if err := s.st.Rename(s.lookup(t, fd), fn, s.lookup(t, td), tn, 0); err != nil {
		t.Fatalf("rename %s %s: %v", from, to, err)
	}
}

// view is everything a reader of the engine sees, for comparing two.
type view struct {
	Entries map[uint64]entryView
	Values  map[string][]string
	Recent  []uint64
	Results map[string][]string
}

// entryView is what an Entry holds, for comparing.
type entryView struct {
	Ino               uint64
	Users, Tags       []string
	Type              string
	Created, Modified time.Time
	Parent            uint64
	Name              string
	Ctime             int64
	Size              uint64
	Hidden            bool
	Lines             []LineMeta
}

var snapQueries = []string{"river", "mountain lake", "alice", "bob plans", "rewritten words", "appended line",
	"moved note", "archived thoughts", "fresh arrival", "memory", "turn"}

func (s *session) view(t *testing.T) view {
	t.Helper()
	e := s.e
	e.Ready()
	v := view{Entries: map[uint64]entryView{}, Values: map[string][]string{}, Results: map[string][]string{}}
	e.cat.mu.RLock()
	e.cat.ents.each(func(ent *Entry) bool {
		// Not nextLine and indexedSize: how a log was read, not what it holds.
		ev := entryView{Ino: ent.Ino, Users: ent.Users, Tags: ent.Tags, Type: ent.Type, Created: ent.Created, Modified: ent.Modified,
			Parent: ent.parent, Name: ent.name, Ctime: ent.ctime, Size: ent.size, Hidden: e.cat.hidden[ent.Ino]}
		if ent.log != nil {
			ev.Lines = ent.log.lines
		}
		v.Entries[ent.Ino] = ev
		return true
	})
	e.cat.mu.RUnlock()
	for _, f := range []string{"user", "type", "tag", "date"} {
		v.Values[f] = e.Values(f, Filter{})
	}
	v.Recent = e.Recent(20, Filter{})
	for _, text := range snapQueries {
		q, err := ParseQuery(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range e.Search(q, Filter{}) {
			v.Results[text] = append(v.Results[text], fmt.Sprintf("%s#%d %.9f", r.Path, r.Line, r.Score))
		}
	}
	return v
}

func sameView(t *testing.T, got, want view) {
	t.Helper()
	if len(got.Entries) != len(want.Entries) {
		t.Errorf("%d memories in the catalog, want %d", len(got.Entries), len(want.Entries))
	}
	for ino, w := range want.Entries {
		if g, ok := got.Entries[ino]; !ok || !reflect.DeepEqual(g, w) {
			t.Errorf("memory %d:\n got %+v\nwant %+v", ino, g, w)
		}
	}
	for ino := range got.Entries {
		if _, ok := want.Entries[ino]; !ok {
			t.Errorf("memory %d is in the catalog and should not be: %+v", ino, got.Entries[ino])
		}
	}
	if !reflect.DeepEqual(got.Values, want.Values) {
		t.Errorf("values:\n got %v\nwant %v", got.Values, want.Values)
	}
	if !reflect.DeepEqual(got.Recent, want.Recent) {
		t.Errorf("recent:\n got %v\nwant %v", got.Recent, want.Recent)
	}
	for _, q := range snapQueries {
		if !reflect.DeepEqual(got.Results[q], want.Results[q]) {
			t.Errorf("search %q:\n got %q\nwant %q", q, got.Results[q], want.Results[q])
		}
	}
}

func frontText(user, tag, body string) string {
	return fmt.Sprintf("---\nuser: %s\ntags: [%s]\ntype: episodic\n---\n%s\n", user, tag, body)
}

// TestSnapshotCatchesUp: a snapshot written at a stop, then a store
// changed by a program that keeps no index (an older binary, or a mount
// killed before its next snapshot), then a start from the snapshot: the
// catalog, the views and every search are what a build from the store
// gives.
func TestSnapshotCatchesUp(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "index", "views.snap")
	a := openSession(t, dir, snap, "")
	for i := range 40 {
		user := []string{"alice", "bob"}[i%2]
		a.write(t, fmt.Sprintf("/episodic/notes/n%02d.md", i), frontText(user, fmt.Sprintf("t%d", i%3), fmt.Sprintf("note %d about the river and the mountain lake, memory %d", i, i)))
	}
	a.write(t, "/episodic/moving/m.md", frontText("alice", "move", "moved note before"))
	a.write(t, "/episodic/deep/one/two.md", frontText("bob", "deep", "archived thoughts of bob"))
	a.write(t, "/episodic/s1/turns.jsonl", `{"user":"alice","speaker":"alice","text":"first turn by alice about the river","created":"2024-01-02T10:00:00Z"}`+"\n"+
		`{"user":"bob","speaker":"bob","text":"bob plans a trip","created":"2024-01-03T10:00:00Z"}`+"\n")
	before := a.view(t)
	a.close(t)
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("no snapshot after the stop: %v", err)
	}

	b := openSession(t, dir, "-", "") // no engine: nothing derived is kept
	b.write(t, "/episodic/notes/n03.md", frontText("carol", "t9", "rewritten words by carol"))
	if _, err := b.st.Remove(b.lookup(t, "/episodic/notes"), "n04.md"); err != nil {
		t.Fatal(err)
	}
	b.rename(t, "/episodic/notes/n05.md", "/episodic/moving/n05-renamed.md")
	b.rename(t, "/episodic/deep", "/archive/deep") // a directory into /archive: hidden
	b.append(t, "/episodic/s1/turns.jsonl", `{"user":"carol","speaker":"carol","text":"an appended line by carol","created":"2024-02-01T10:00:00Z"}`+"\n")
	b.write(t, "/episodic/fresh/new.md", frontText("dave", "new", "a fresh arrival"))
	buf := make([]byte, 64)
	for i := 10; i < 15; i++ { // reads: access times and counts, no content change
		if _, err := b.st.ReadAt(b.lookup(t, fmt.Sprintf("/episodic/notes/n%02d.md", i)), buf, 0); err != nil {
			t.Fatal(err)
		}
	}
	mode, old := uint32(0o600), int64(1e18)
	if _, err := b.st.SetAttr(b.lookup(t, "/episodic/notes/n15.md"), store.AttrChange{Mode: &mode}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.SetAttr(b.lookup(t, "/episodic/notes/n16.md"), store.AttrChange{Mtime: &old}); err != nil {
		t.Fatal(err)
	}
	b.close(t)

	c := openSession(t, dir, snap, "")
	got := c.view(t)
	if !strings.Contains(c.log.String(), "from its snapshot") {
		t.Errorf("the start did not read the snapshot; its log:\n%s", c.log.String())
	}
	c.close(t)
	d := openSession(t, dir, "", "") // no snapshot: a build from the store
	want := d.view(t)
	d.close(t)
	if reflect.DeepEqual(before.Results, want.Results) {
		t.Fatal("the changes made no difference to the searches: the test tests nothing")
	}
	sameView(t, got, want)
	for _, q := range []string{"rewritten words", "appended line", "fresh arrival"} {
		if len(got.Results[q]) == 0 {
			t.Errorf("search %q found nothing after the catch-up", q)
		}
	}
	// c's stop wrote a snapshot from a loaded one and the changes since
	// (records copied from its segment, the others encoded): a start
	// from it sees the same again, and so after one more change.
	c2 := openSession(t, dir, snap, "")
	c2.write(t, "/episodic/notes/n20.md", frontText("erin", "t1", "a late edit by erin"))
	got2 := c2.view(t)
	c2.close(t)
	c3 := openSession(t, dir, snap, "")
	got3 := c3.view(t)
	c3.close(t)
	if !strings.Contains(c3.log.String(), "from its snapshot") {
		t.Errorf("the third start did not read the snapshot; its log:\n%s", c3.log.String())
	}
	d2 := openSession(t, dir, "", "")
	want2 := d2.view(t)
	d2.close(t)
	sameView(t, got2, want2)
	sameView(t, got3, want2)
}

// TestSnapshotRefused: a snapshot that does not fit the store is not
// read (the index is built from the store, and says why).
func TestSnapshotRefused(t *testing.T) {
	cases := []struct {
		name, why string
		spoil     func(t *testing.T, dir, snap string)
	}{
		{"policy changed", "the policy changed", func(t *testing.T, dir, snap string) {
			b := openSession(t, dir, "-", "")
			if err := b.st.SetPolicy([]byte("ignore: [\"*.tmp\"]\n")); err != nil {
				t.Fatal(err)
			}
			b.close(t)
		}},
		{"bit flipped", "", func(t *testing.T, dir, snap string) { flipByte(t, snap, 2) }},
		{"checksum flipped", "checksum", func(t *testing.T, dir, snap string) { flipByte(t, snap, -1) }},
		{"cut short", "", func(t *testing.T, dir, snap string) {
			fi, err := os.Stat(snap)
			if err == nil {
				err = os.Truncate(snap, fi.Size()/2)
			}
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"another store", "another store", func(t *testing.T, dir, snap string) {
			if err := os.RemoveAll(filepath.Join(dir, "db")); err != nil {
				t.Fatal(err)
			}
			b := openSession(t, dir, "-", "")
			b.write(t, "/episodic/other.md", "another store's only memory, about a river")
			b.close(t)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			snap := filepath.Join(dir, "index", "views.snap")
			a := openSession(t, dir, snap, "")
			for i := range 10 {
				a.write(t, fmt.Sprintf("/episodic/n%d.md", i), fmt.Sprintf("note %d about the river", i))
			}
			a.close(t)
			tc.spoil(t, dir, snap)
			c := openSession(t, dir, snap, "")
			got := c.view(t)
			logged := c.log.String()
			c.close(t)
			if strings.Contains(logged, "from its snapshot") || !strings.Contains(logged, "not using the index snapshot") || !strings.Contains(logged, tc.why) {
				t.Errorf("want the snapshot refused (%q); the log:\n%s", tc.why, logged)
			}
			d := openSession(t, dir, "", "")
			want := d.view(t)
			d.close(t)
			sameView(t, got, want)
		})
	}
}

// flipByte flips a bit of the file's byte at len/at (at > 0) or its last.
func flipByte(t *testing.T, p string, at int) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := len(b) - 1
	if at > 0 {
		i = len(b) / at
	}
	b[i] ^= 0x40
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
