package views

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
	"time"
)

// A catalog segment round-trips its entries (a log's lines too), a
// segment written from a base copies its records, and a malformed one is
// refused.
func TestCatBase(t *testing.T) {
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.FixedZone("", 2*3600))
	ents := []*Entry{
		{Ino: 3, Users: []string{"alice"}, Type: "episodic", Tags: []string{"a", "b"}, Created: at, Modified: at.Add(time.Hour), parent: 1, name: "n.md", ctime: 42, size: 7},
		{Ino: 9, Users: []string{"bob", "alice"}, Modified: at, parent: 2, name: "turns.jsonl", nextLine: 3, indexedSize: 99},
	}
	ents[1].log = (*logLines)(nil).extend([]LineMeta{{Line: 1, Users: []string{"bob"}, Speaker: "bob", Created: at, off: 0, size: 40},
		{Line: 2, Users: []string{"alice"}, Tags: []string{"x"}, off: 40, size: 50}})
	write := func(base *catBase, add func(w *catWriter)) []byte {
		w := newCatWriter(base)
		add(w)
		var buf bytes.Buffer
		if err := w.writeTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	seg := write(nil, func(w *catWriter) {
		for _, ent := range ents {
			w.add(ent, 0)
		}
	})
	b, err := parseCatBase(seg)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range ents {
		got := b.entry(i)
		if got == nil || !got.Created.Equal(want.Created) || !got.Modified.Equal(want.Modified) {
			t.Fatalf("entry %d: %+v, want %+v", i, got, want)
		}
		got.Created, got.Modified = want.Created, want.Modified
		if got.log != nil {
			for j := range got.log.lines {
				if !got.log.lines[j].Created.Equal(want.log.lines[j].Created) {
					t.Fatalf("entry %d line %d: created %v, want %v", i, j, got.log.lines[j].Created, want.log.lines[j].Created)
				}
				got.log.lines[j].Created = want.log.lines[j].Created
			}
			got.log.first, got.log.last = want.log.first, want.log.last
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("entry %d:\n got %+v\nwant %+v", i, got, want)
		}
		if b.mods[i] != want.Modified.UnixNano() {
			t.Fatalf("entry %d: mod %d", i, b.mods[i])
		}
	}
	// From the base: its first record copied, a new entry with a new value.
	again := write(b, func(w *catWriter) {
		w.add(nil, 0)
		w.add(&Entry{Ino: 12, Users: []string{"carol"}, Modified: at, name: "c.md"}, 0)
	})
	b2, err := parseCatBase(again)
	if err != nil {
		t.Fatal(err)
	}
	if e := b2.entry(0); e == nil || !reflect.DeepEqual(e.Users, ents[0].Users) || e.name != "n.md" {
		t.Fatalf("copied record: %+v", e)
	}
	if e := b2.entry(1); e == nil || e.Ino != 12 || !reflect.DeepEqual(e.Users, []string{"carol"}) {
		t.Fatalf("new record: %+v", e)
	}
	for name, bad := range map[string]func(s []byte) []byte{
		"no magic":     func(s []byte) []byte { s[0] = 'x'; return s },
		"cut short":    func(s []byte) []byte { return s[:len(s)-16] },
		"more entries": func(s []byte) []byte { binary.LittleEndian.PutUint64(s[8:], 3); return s },
		"out of order": func(s []byte) []byte { binary.LittleEndian.PutUint64(s[32:], 10); return s },
		"bytes after":  func(s []byte) []byte { return append(s, make([]byte, 8)...) },
	} {
		if _, err := parseCatBase(bad(bytes.Clone(seg))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A record that does not hold decodes to nothing, not to garbage.
	cut := bytes.Clone(seg)
	b3, err := parseCatBase(cut)
	if err != nil {
		t.Fatal(err)
	}
	b3.recs[0] = 0xff // a uvarint that does not end where it should
	if e := b3.entry(0); e != nil && e.Type == "episodic" {
		t.Fatalf("a damaged record decoded as the original: %+v", e)
	}
}
