package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/embed/testmodel"
)

type embedStats struct {
	Model    string `json:"model"`
	Memories int    `json:"memories"`
	Backlog  int    `json:"backlog"`
	Embedded int    `json:"embedded"`
	Failed   int    `json:"failed"`
}

// waitEmbedded reads meta/stats.json until the index and embedding
// backlogs are empty.
func waitEmbedded(t *testing.T, mnt string) embedStats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(mnt, "meta/stats.json"))
		check(t, err)
		var s struct {
			Index     uint64      `json:"index_backlog"`
			Embedding *embedStats `json:"embedding"`
		}
		check(t, json.Unmarshal(b, &s))
		if s.Embedding == nil {
			t.Fatalf("meta/stats.json has no embedding section: %s", b)
		}
		if s.Embedding.Backlog == 0 && s.Index == 0 { // changes not yet indexed are not queued yet
			return *s.Embedding
		}
		if time.Now().After(deadline) {
			t.Fatalf("embedding backlog stuck: %+v", *s.Embedding)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestModelMount: with a generated BERT (the real loading and encoding
// code), `model list` shows it, `mount --model NAME` embeds what is written
// in the background and search shows lexical and vector ranks; a remount
// embeds nothing again, but what changed while mounted without the model;
// a broken model is one clear error at mount time.
func TestModelMount(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	check(t, testmodel.Write(filepath.Join(data, "models", "test", "tiny"), testmodel.Tiny(), 1))
	if r := mustRun(t, "model", "list", "--data", data); !strings.Contains(r.stdout, "test/tiny\t") {
		t.Fatalf("model list: %s", r)
	}
	m := startMount(t, data, mnt, "--model", "test/tiny")
	notes := map[string]string{
		"semantic/trip.md":   "We took the night train to Lisbon in May.\n",
		"semantic/food.md":   "Alice likes ramen and green tea.\n",
		"semantic/work.md":   "The budget meeting moved to Friday.\n",
		"episodic/log.jsonl": "{\"text\": \"the dog barked at the mail carrier\"}\n",
	}
	for p, body := range notes {
		check(t, os.WriteFile(filepath.Join(mnt, p), []byte(body), 0o644))
	}
	s := waitEmbedded(t, mnt)
	if s.Memories != len(notes) || s.Failed != 0 || !strings.HasPrefix(s.Model, "tiny@") {
		t.Fatalf("after writing: %+v", s)
	}
	res, err := os.ReadFile(filepath.Join(mnt, "search", "night train", ".results"))
	check(t, err)
	if !strings.Contains(string(res), "# rank\tfused\tlexical\tvector\tpath") || !strings.Contains(string(res), "/semantic/trip.md") {
		t.Fatalf(".results with a model:\n%s", res)
	}
	m.stop(t, syscall.SIGTERM)

	// Without the model: lexical search as before; a change meanwhile.
	m = startMount(t, data, mnt)
	res, err = os.ReadFile(filepath.Join(mnt, "search", "night train", ".results"))
	check(t, err)
	if !strings.Contains(string(res), "# rank\tscore\tpath") {
		t.Fatalf(".results without a model:\n%s", res)
	}
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/food.md"), []byte("Alice now prefers udon.\n"), 0o644))
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt, "--model", filepath.Join(data, "models", "test", "tiny"))
	s = waitEmbedded(t, mnt)
	if s.Memories != len(notes) || s.Embedded != 1 {
		t.Fatalf("after a remount: %+v (want only the changed memory embedded)", s)
	}
	m.stop(t, syscall.SIGTERM)

	bad := t.TempDir()
	check(t, os.WriteFile(filepath.Join(bad, "config.json"), []byte("{not json"), 0o644))
	oneErrorLine(t, runMnemofs(t, "mount", "--data", data, "--model", bad, mnt), "config.json")
	oneErrorLine(t, runMnemofs(t, "mount", "--data", data, "--model", "no/such", mnt), "no model of that name")
}
