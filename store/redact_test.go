package store

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreRedaction: under a store-mode rule the bytes are masked before
// they reach the KV or a blob file: small files, large ones (which would
// be blobs), appends, rewrites of a versioned tree, the bulk path; and
// nothing on disk holds the secret.
func TestStoreRedaction(t *testing.T) {
	dir := t.TempDir()
	s, kv := openBlobStore(t, dir)
	must(t, s.SetPolicy([]byte("redact:\n  - {detector: api_key, mode: store, paths: [semantic/**, episodic/**]}\n  - {name: ticket, pattern: 'TICKET-[0-9]{6}', mode: store}\n")))
	key := "AKIAIOSFODNN7EXAMPLE"
	sem := dirIno(t, s, "semantic")
	small := writeFile(t, s, sem, "keys.md", []byte("the deploy key is "+key+" for prod\n"))
	if got := string(readAll(t, s, small)); got != "the deploy key is [redacted:api_key] for prod\n" {
		t.Fatalf("small: %q", got)
	}
	big := bytes.Repeat([]byte("filler words for a long note\n"), 3000)
	big = append(big, []byte("and "+key+" at the end, TICKET-123456\n")...)
	large := writeFile(t, s, sem, "large.md", big)
	got := readAll(t, s, large)
	if bytes.Contains(got, []byte(key)) || !bytes.HasSuffix(got, []byte("and [redacted:api_key] at the end, [redacted:ticket]\n")) || len(got) != len(big)-len(key)-len("TICKET-123456")+len("[redacted:api_key][redacted:ticket]") {
		t.Fatalf("large: %d bytes, tail %q", len(got), got[len(got)-80:])
	}
	rewrite(t, s, small, []byte("rotated to "+strings.Replace(key, "EXAMPLE", "EXAMPLF", 1)+"\n"))
	for _, v := range versionBytes(t, s, small) {
		if bytes.Contains(v, []byte("AKIA")) {
			t.Fatalf("a version holds the key: %q", v)
		}
	}
	epi := dirIno(t, s, "episodic")
	log := writeFile(t, s, epi, "turns.jsonl", []byte(`{"text":"hello"}`+"\n"))
	appendBytes(t, s, log, []byte(`{"text":"my key `+key+`"}`+"\n"))
	if got := string(readAll(t, s, log)); got != `{"text":"hello"}`+"\n"+`{"text":"my key [redacted:api_key]"}`+"\n" {
		t.Fatalf("log: %q", got)
	}
	// Split across two commits: masked once whole (in one chunk).
	split := writeFile(t, s, epi, "split.md", []byte("key AKIAIOSF"))
	appendBytes(t, s, split, []byte("ODNN7EXAMPLE done\n"))
	if got := string(readAll(t, s, split)); got != "key [redacted:api_key] done\n" {
		t.Fatalf("split: %q", got)
	}
	b := s.NewBulk()
	must(t, b.AddFile("/episodic/imported.md", []byte("imported "+key+"\n"), 0o644, Owner{}, 1))
	must(t, b.Flush())
	// Outside the rule's paths: as written.
	work := dirIno(t, s, "working")
	plain := writeFile(t, s, work, "plain.md", []byte("key "+key+" TICKET-654321\n"))
	if got := string(readAll(t, s, plain)); got != "key "+key+" [redacted:ticket]\n" {
		t.Fatalf("working: %q", got)
	}
	counts := map[string]uint64{}
	for _, c := range s.StoreRedactions() {
		counts[c.Rule] = c.Count
	}
	if counts["api_key"] != 6 || counts["ticket"] != 2 {
		t.Fatalf("counts %v", counts)
	}
	if _, err := s.Remove(work, "plain.md"); err != nil {
		t.Fatal(err)
	}
	must(t, s.Sync())
	// While open, Badger's memtable log holds every recent value as
	// written; after the close, the value log holds the large ones.
	grepDir(t, dir, "key "+key+" [redacted:ticket]", true)
	for _, needle := range []string{"deploy key is " + key, "and " + key, "my key " + key, "imported " + key, "TICKET-123456", "EXAMPLF"} {
		grepDir(t, dir, needle, false)
	}
	s.Close()
	kv.Close()
	for _, needle := range []string{"and " + key, "TICKET-123456"} {
		grepDir(t, dir, needle, false)
	}
}

// grepDir checks whether some file under dir holds needle.
func grepDir(t *testing.T, dir, needle string, want bool) {
	t.Helper()
	found := ""
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fileHolds(p, []byte(needle)) {
			found = p
		}
		return nil
	})
	if want && found == "" {
		t.Errorf("no file under %s holds %q (the control: the other checks prove nothing)", dir, needle)
	}
	if !want && found != "" {
		t.Errorf("%s holds %q", found, needle)
	}
}

// fileHolds reads p a MiB at a time (Badger's files are large and sparse).
func fileHolds(p string, needle []byte) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 1<<20+len(needle))
	keep := 0
	for {
		n, err := f.Read(buf[keep:])
		if bytes.Contains(buf[:keep+n], needle) {
			return true
		}
		if err != nil {
			return false
		}
		if keep+n >= len(needle) {
			keep = copy(buf, buf[keep+n-len(needle)+1:keep+n])
		} else {
			keep += n
		}
	}
}
