package wordnet

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// miniDB writes a tiny database in the original format: sport with two
// hyponyms (one of which has its own), child/kid, and the exception
// children → child.
func miniDB(t *testing.T) string {
	dir := t.TempDir()
	type syn struct {
		key    string
		words  []string
		ptrs   []string // "~ key" or "@ key"
		offset int
	}
	syns := []*syn{
		{key: "sport", words: []string{"sport", "athletics"}, ptrs: []string{"~ water", "~ team"}},
		{key: "water", words: []string{"water_sport", "aquatics"}, ptrs: []string{"@ sport", "~ surf"}},
		{key: "surf", words: []string{"surfing", "surfboarding", "surfriding"}, ptrs: []string{"@ water"}},
		{key: "team", words: []string{"team_sport"}, ptrs: []string{"@ sport"}},
		{key: "child", words: []string{"child", "kid", "youngster"}},
	}
	head := "  1 This software and database is being provided to you, the LICENSEE, by  \n"
	off := len(head)
	by := map[string]*syn{}
	for _, s := range syns {
		by[s.key] = s
	}
	// Offsets are 8 digits, so every line's length is known before them.
	line := func(s *syn) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%08d 04 n %02x", s.offset, len(s.words))
		for _, w := range s.words {
			b.WriteString(" " + w + " 0")
		}
		fmt.Fprintf(&b, " %03d", len(s.ptrs))
		for _, p := range s.ptrs {
			sym, k, _ := strings.Cut(p, " ")
			fmt.Fprintf(&b, " %s %08d n 0000", sym, by[k].offset)
		}
		b.WriteString(" | a gloss  \n")
		return b.String()
	}
	for _, s := range syns {
		s.offset = off
		off += len(line(s))
	}
	data := head
	for _, s := range syns {
		data += line(s)
	}
	idx := map[string][]int{}
	for _, s := range syns {
		for _, w := range s.words {
			idx[w] = append(idx[w], s.offset)
		}
	}
	keys := make([]string, 0, len(idx))
	for k := range idx {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	index := head
	for _, k := range keys {
		index += fmt.Sprintf("%s n %d 1 @ %d 0", k, len(idx[k]), len(idx[k]))
		for _, o := range idx[k] {
			index += fmt.Sprintf(" %08d", o)
		}
		index += "  \n"
	}
	files := map[string]string{"index.noun": index, "data.noun": data, "noun.exc": "children child\n"}
	for _, p := range []string{"verb", "adj", "adv"} {
		files["index."+p], files["data."+p] = head, head
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestMini(t *testing.T) {
	db, err := Open(miniDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Lemmas("children", Noun); !slices.Equal(got, []string{"child"}) {
		t.Fatalf("lemmas of children: %q", got)
	}
	if got := db.Lemmas("sports", Noun); !slices.Equal(got, []string{"sport"}) {
		t.Fatalf("lemmas of sports: %q", got)
	}
	if got := db.Synonyms("kids", Noun, 1); !slices.Equal(got, []string{"child", "youngster"}) {
		t.Fatalf("synonyms of kids: %q", got)
	}
	if got := db.Hyponyms("sports", Noun, 1, 2, 10); !slices.Equal(got, []string{"water_sport", "aquatics", "team_sport", "surfing", "surfboarding", "surfriding"}) {
		t.Fatalf("hyponyms of sports: %q", got)
	}
	if got := db.Hyponyms("sport", Noun, 1, 2, 3); len(got) != 3 {
		t.Fatalf("max: %q", got)
	}
	if db.Lemmas("zebra", Noun) != nil || db.Synonyms("zebra", Verb, 1) != nil {
		t.Fatal("unknown word")
	}
}

// TestSystem checks the installed database, where there is one.
func TestSystem(t *testing.T) {
	db, err := Open("/usr/share/wordnet")
	if err != nil {
		t.Skip("no WordNet database:", err)
	}
	defer db.Close()
	if got := db.Synonyms("kids", Noun, 1); !slices.Contains(got, "child") {
		t.Fatalf("synonyms of kids: %q", got)
	}
	if got := db.Hyponyms("sports", Noun, 1, 3, 500); !slices.Contains(got, "surfing") {
		t.Fatalf("hyponyms of sports: %q", got)
	}
	if got := db.Lemmas("injured", Verb); !slices.Contains(got, "injure") {
		t.Fatalf("lemmas of injured: %q", got)
	}
}
