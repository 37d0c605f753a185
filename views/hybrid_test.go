package views

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/search"
)

func corpus() map[string]string {
	words := strings.Fields("alpha budget meeting river ocean garden violin planet castle winter summer bread coffee tiger music paper stone cloud forest market")
	r := rand.New(rand.NewPCG(1, 2))
	docs := map[string]string{}
	for k := range 80 {
		var b strings.Builder
		for range 6 {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		docs[fmt.Sprintf("d%02d.md", k)] = b.String()
	}
	docs["target.md"] = "fixing the car engine today"
	return docs
}

func searchPaths(t *testing.T, e *Engine, query string) []string {
	t.Helper()
	q, err := ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range e.Search(q, Filter{}) {
		out = append(out, r.Path)
	}
	return out
}

// TestHybridSearch: with no model, or one that knows nothing (random
// vectors), search answers exactly as lexical search does; with a model
// that knows synonyms, a memory the words miss is found, and .results
// shows both ranks.
func TestHybridSearch(t *testing.T) {
	queries := []string{"budget meeting", "river ocean garden", "coffee bread", "tiger music winter", "automobile repair", "castle"}
	run := func(enc Encoder) map[string][]string {
		f := openEmbed(t, t.TempDir(), enc)
		defer f.close()
		// The words alone must miss "automobile repair": no WordNet.
		tun := search.DefaultTuning
		tun.Synonyms, tun.Hyponyms = 0, 0
		f.e.SetTuning(tun)
		docs := corpus()
		for _, name := range slices.Sorted(maps.Keys(docs)) { // the same inodes each run: ties break alike
			f.write(name, docs[name])
		}
		if enc != nil {
			if s := f.settle(); s.Memories != 81 {
				t.Fatalf("embedded %+v", s)
			}
		}
		out := map[string][]string{}
		for _, q := range queries {
			out[q] = searchPaths(t, f.e, q)
		}
		if enc != nil && enc.Name() == "synonyms" {
			q, _ := ParseQuery("automobile repair")
			txt := string(ResultsText(q, f.e.Search(q, Filter{})))
			if !strings.Contains(txt, "lexical\tvector") || !strings.Contains(txt, "\t-\t1\t/target.md") {
				t.Errorf(".results of a vector-only hit:\n%s", txt)
			}
		}
		return out
	}
	lexical := run(nil)
	noise := run(&hashEncoder{name: "noise", dim: 256, rand: true})
	for _, q := range queries {
		if strings.Join(noise[q], " ") != strings.Join(lexical[q], " ") {
			t.Errorf("%q: a model that knows nothing changed the answer:\n lexical %v\n hybrid  %v", q, lexical[q], noise[q])
		}
	}
	if len(lexical["automobile repair"]) != 0 {
		t.Fatalf("the words found %v", lexical["automobile repair"])
	}
	syn := run(&hashEncoder{name: "synonyms", dim: 256, syn: map[string]string{"automobile": "car", "repair": "fixing"}})
	if got := syn["automobile repair"]; len(got) == 0 || got[0] != "/target.md" {
		t.Fatalf("a model that knows synonyms: %v", got)
	}
}
