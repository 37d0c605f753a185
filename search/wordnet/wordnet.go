// Package wordnet reads the Princeton WordNet 3.0 database in its
// original files (index.noun, data.noun, … and the *.exc exception lists,
// as Debian's wordnet-base installs them in /usr/share/wordnet) and
// answers the few questions search asks of it: the synonyms of a word
// (the other lemmas of its most frequent senses) and its hyponyms (the
// more specific concepts below them). It is loaded at run time when
// present; without it, search works as before. The database is never
// part of this repository.
//
// Only the index files are held in memory (about 6 MiB, searched by
// binary search: they are sorted); synsets are read from the data files
// by their byte offsets, as the format intends. Safe for concurrent use.
package wordnet

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Pos is a part of speech.
type Pos int

// The parts of speech of the database.
const (
	Noun Pos = iota
	Verb
	Adj
	Adv
	nPos
)

var posNames = [nPos]string{"noun", "verb", "adj", "adv"}

// DB is an open WordNet database.
type DB struct {
	index [nPos][]byte            // the index file, sorted lines
	data  [nPos]*os.File          // the data file, read by offset
	exc   [nPos]map[string]string // irregular forms: "children" → "child"
}

// Open opens the database in dir.
func Open(dir string) (*DB, error) {
	db := &DB{}
	for p := Pos(0); p < nPos; p++ {
		idx, err := os.ReadFile(filepath.Join(dir, "index."+posNames[p]))
		if err != nil {
			db.Close()
			return nil, err
		}
		db.index[p] = idx
		if db.data[p], err = os.Open(filepath.Join(dir, "data."+posNames[p])); err != nil {
			db.Close()
			return nil, err
		}
		db.exc[p] = map[string]string{}
		if exc, err := os.ReadFile(filepath.Join(dir, posNames[p]+".exc")); err == nil {
			for _, l := range strings.Split(string(exc), "\n") {
				if f := strings.Fields(l); len(f) >= 2 {
					db.exc[p][f[0]] = f[1]
				}
			}
		}
	}
	return db, nil
}

// Close releases the data files.
func (db *DB) Close() {
	for _, f := range db.data {
		if f != nil {
			f.Close()
		}
	}
}

var (
	defOnce sync.Once
	defDB   *DB
)

// Default is the database at $MNEMOFS_WORDNET (a directory, or "off"),
// else /usr/share/wordnet; nil when there is none. It is opened once.
func Default() *DB {
	defOnce.Do(func() {
		dir := os.Getenv("MNEMOFS_WORDNET")
		if dir == "off" {
			return
		}
		if dir == "" {
			dir = "/usr/share/wordnet"
		}
		defDB, _ = Open(dir)
	})
	return defDB
}

// synsets returns the synset offsets of lemma (lower case, '_' for
// spaces) as part of speech p, most frequent sense first.
func (db *DB) synsets(lemma string, p Pos) []int64 {
	idx := db.index[p]
	key := []byte(lemma + " ")
	// Binary search over line starts: find the first line >= key.
	lo, hi := 0, len(idx)
	for lo < hi {
		mid := (lo + hi) / 2
		s := lineStart(idx, mid)
		e := bytes.IndexByte(idx[s:], '\n')
		if e < 0 {
			e = len(idx) - s
		}
		if bytes.Compare(idx[s:s+e], key) < 0 {
			lo = s + e + 1
		} else {
			hi = s
		}
	}
	if lo >= len(idx) || !bytes.HasPrefix(idx[lo:], key) {
		return nil
	}
	end := bytes.IndexByte(idx[lo:], '\n')
	if end < 0 {
		end = len(idx) - lo
	}
	f := strings.Fields(string(idx[lo : lo+end]))
	// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offsets...
	if len(f) < 4 {
		return nil
	}
	n, err1 := strconv.Atoi(f[2])
	pc, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || len(f) < 6+pc+n {
		return nil
	}
	var out []int64
	for _, o := range f[6+pc : 6+pc+n] {
		if v, err := strconv.ParseInt(o, 10, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// lineStart is the start of the line holding byte i.
func lineStart(b []byte, i int) int {
	if i >= len(b) {
		i = len(b) - 1
	}
	for i > 0 && b[i-1] != '\n' {
		i--
	}
	return i
}

// synset is one synset's lemmas and pointers.
type synset struct {
	lemmas []string
	ptrs   []pointer
}

type pointer struct {
	sym string
	off int64
	pos Pos
}

var errFormat = errors.New("wordnet: bad data line")

// read reads the synset at offset off of the data file of p.
func (db *DB) read(off int64, p Pos) (synset, error) {
	buf := make([]byte, 4096)
	var line []byte
	for {
		n, err := db.data[p].ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			line = buf[:i]
			break
		}
		if err != nil || len(buf) >= 1<<20 {
			return synset{}, errFormat
		}
		buf = make([]byte, 2*len(buf))
	}
	f := strings.Fields(string(line))
	// offset lex_filenum ss_type w_cnt (word lex_id)... p_cnt (sym off pos src)...
	if len(f) < 4 {
		return synset{}, errFormat
	}
	wc, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || len(f) < 5+2*int(wc) {
		return synset{}, errFormat
	}
	var s synset
	for i := 0; i < int(wc); i++ {
		w := strings.ToLower(f[4+2*i])
		if j := strings.IndexByte(w, '('); j > 0 { // "galore(ip)"
			w = w[:j]
		}
		s.lemmas = append(s.lemmas, w)
	}
	at := 4 + 2*int(wc)
	pc, err := strconv.Atoi(f[at])
	if err != nil {
		return synset{}, errFormat
	}
	for i := 0; i < pc && at+4+4*i <= len(f); i++ {
		q := f[at+1+4*i : at+5+4*i]
		o, err := strconv.ParseInt(q[1], 10, 64)
		if err != nil {
			continue
		}
		s.ptrs = append(s.ptrs, pointer{sym: q[0], off: o, pos: posOf(q[2])})
	}
	return s, nil
}

func posOf(s string) Pos {
	switch s {
	case "n":
		return Noun
	case "v":
		return Verb
	case "a", "s":
		return Adj
	}
	return Adv
}

// Lemmas returns the base forms of word as part of speech p that the
// database holds (WordNet's morphy: irregular forms, then suffix rules).
func (db *DB) Lemmas(word string, p Pos) []string {
	word = strings.ToLower(strings.TrimSpace(word))
	var out []string
	add := func(w string) {
		for _, o := range out {
			if o == w {
				return
			}
		}
		if len(db.synsets(w, p)) > 0 {
			out = append(out, w)
		}
	}
	if b, ok := db.exc[p][word]; ok {
		add(b)
	}
	add(word)
	for _, r := range suffixRules[p] {
		if strings.HasSuffix(word, r[0]) && len(word) > len(r[0]) {
			add(word[:len(word)-len(r[0])] + r[1])
		}
	}
	return out
}

// suffixRules are morphy's detachment rules.
var suffixRules = [nPos][][2]string{
	Noun: {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	Verb: {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	Adj:  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// Synonyms returns the other lemmas of the first senses senses of word as
// p (multi-word lemmas with '_' for spaces), in sense order.
func (db *DB) Synonyms(word string, p Pos, senses int) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range db.Lemmas(word, p) {
		seen[l] = true
	}
	for _, l := range db.Lemmas(word, p) {
		offs := db.synsets(l, p)
		for _, o := range offs[:min(senses, len(offs))] {
			s, err := db.read(o, p)
			if err != nil {
				continue
			}
			for _, w := range s.lemmas {
				if !seen[w] {
					seen[w] = true
					out = append(out, w)
				}
			}
		}
	}
	return out
}

// Hyponyms returns the lemmas of the synsets below the first senses senses
// of word as p, depth levels down, breadth first, at most max of them.
func (db *DB) Hyponyms(word string, p Pos, senses, depth, max int) []string {
	var frontier []int64
	for _, l := range db.Lemmas(word, p) {
		offs := db.synsets(l, p)
		frontier = append(frontier, offs[:min(senses, len(offs))]...)
	}
	var out []string
	seen := map[string]bool{}
	visited := map[int64]bool{}
	for d := 0; d < depth && len(frontier) > 0; d++ {
		var next []int64
		for _, o := range frontier {
			s, err := db.read(o, p)
			if err != nil {
				continue
			}
			for _, ptr := range s.ptrs {
				if (ptr.sym == "~" || ptr.sym == "~i") && ptr.pos == p && !visited[ptr.off] {
					visited[ptr.off] = true
					next = append(next, ptr.off)
				}
			}
		}
		sort.Slice(next, func(a, b int) bool { return next[a] < next[b] })
		for _, o := range next {
			s, err := db.read(o, p)
			if err != nil {
				continue
			}
			for _, w := range s.lemmas {
				if !seen[w] {
					seen[w] = true
					out = append(out, w)
					if len(out) >= max {
						return out
					}
				}
			}
		}
		frontier = next
	}
	return out
}
