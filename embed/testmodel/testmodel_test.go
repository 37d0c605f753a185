package testmodel

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	textencoding "github.com/nlpodyssey/cybertron/pkg/tasks/textencoding/bert"
)

func TestWriteIsDeterministicAndCybertronLoadsIt(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	for dir, seed := range map[string]uint64{a: 3, b: 3, c: 4} {
		if err := Write(dir, Tiny(), seed); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{ConfigFile, TokenizerConfigFile, VocabFile, WeightsFile} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes with the same seed", f)
		}
	}
	x, _ := os.ReadFile(filepath.Join(a, WeightsFile))
	z, _ := os.ReadFile(filepath.Join(c, WeightsFile))
	if bytes.Equal(x, z) {
		t.Error("different seeds wrote the same weights")
	}
	te, err := textencoding.LoadTextEncoding(a)
	if err != nil {
		t.Fatal(err)
	}
	toks := te.Tokenizer.Tokenize("alice likes ramen and the quick brown fox")
	for _, tk := range toks {
		if tk.String == "[UNK]" {
			t.Errorf("common words tokenised to [UNK]: %v", toks)
		}
	}
}

func TestVocabularies(t *testing.T) {
	for name, v := range map[string][]string{"tiny": TinyVocab(), "minilm": MiniLMVocab(30522)} {
		seen := map[string]bool{}
		for _, tok := range v {
			if seen[tok] || tok == "" || strings.ContainsAny(tok, " \n") {
				t.Fatalf("%s: bad or repeated token %q", name, tok)
			}
			seen[tok] = true
		}
		for _, s := range []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "##s", "##z"} {
			if !seen[s] {
				t.Errorf("%s: no %s", name, s)
			}
		}
	}
	if v := MiniLMVocab(30522); len(v) != 30522 || v[0] != "[PAD]" || v[100] != "[UNK]" || v[101] != "[CLS]" || v[102] != "[SEP]" || v[103] != "[MASK]" {
		t.Errorf("minilm vocabulary: %d entries, specials %v", len(v), v[100:104])
	}
}
