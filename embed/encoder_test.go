package embed

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mnemofs/mnemofs/embed/testmodel"
)

// tinyModel writes a tiny random model into a temporary directory.
func tinyModel(t testing.TB, seed uint64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := testmodel.Write(dir, testmodel.Tiny(), seed); err != nil {
		t.Fatal(err)
	}
	return dir
}

func load(t testing.TB, dir string, o Options) Encoder {
	t.Helper()
	e, err := LoadWith(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func encode(t testing.TB, e Encoder, texts ...string) [][]float32 {
	t.Helper()
	v, err := e.Encode(texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(v), len(texts))
	}
	return v
}

func TestLoadErrors(t *testing.T) {
	good := tinyModel(t, 1)
	// broken copies good's files into a new directory, then lets edit
	// change them; the error must contain want.
	broken := func(name, want string, edit func(dir string)) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{ConfigFile, TokenizerConfigFile, VocabFile, WeightsFile} {
				b, err := os.ReadFile(filepath.Join(good, f))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, f), b, 0o644)
			}
			edit(dir)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want one containing %q", err, want)
			}
			t.Log(err)
		})
	}
	write := func(f, content string) func(string) {
		return func(dir string) { os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644) }
	}
	remove := func(f string) func(string) {
		return func(dir string) { os.Remove(filepath.Join(dir, f)) }
	}
	t.Run("no directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nope")
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("a file, not a directory", func(t *testing.T) {
		if _, err := Load(filepath.Join(good, ConfigFile)); err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Fatalf("error %v", err)
		}
	})
	for _, f := range []string{ConfigFile, TokenizerConfigFile, VocabFile, WeightsFile} {
		broken("missing "+f, filepath.Join("", f)+" is missing", remove(f))
	}
	broken("config not JSON", ConfigFile+": not a valid JSON", write(ConfigFile, "{model_type: bert"))
	broken("not bert", `model_type is "gpt2"`, write(ConfigFile, `{"model_type": "gpt2"}`))
	broken("tokenizer config not JSON", TokenizerConfigFile+": not a valid JSON", write(TokenizerConfigFile, "["))
	broken("vocab without [CLS]", VocabFile+": no [CLS]", write(VocabFile, "[PAD]\n[UNK]\n[SEP]\nthe\n"))
	broken("weights garbage", WeightsFile+": ", write(WeightsFile, "this is not a gob stream"))
	broken("weights empty", WeightsFile+": ", write(WeightsFile, ""))
	broken("weights truncated", WeightsFile+": ", func(dir string) {
		b, _ := os.ReadFile(filepath.Join(dir, WeightsFile))
		os.WriteFile(filepath.Join(dir, WeightsFile), b[:len(b)/2], 0o644)
	})
	broken("vocab larger than the model", "embeddings", func(dir string) {
		b, _ := os.ReadFile(filepath.Join(dir, VocabFile))
		for i := range 50 {
			b = fmt.Appendf(b, "extra%d\n", i)
		}
		os.WriteFile(filepath.Join(dir, VocabFile), b, 0o644)
	})
	if _, err := LoadWith(good, Options{Kernel: "cuda"}); err == nil {
		t.Error("unknown kernel accepted")
	}
}

func TestVectorsAreUnitAndDeterministic(t *testing.T) {
	dir := tinyModel(t, 1)
	a := load(t, dir, Options{})
	b := load(t, dir, Options{})
	if a.Dim() != testmodel.Tiny().Hidden {
		t.Fatalf("Dim %d", a.Dim())
	}
	if a.Name() != b.Name() || !strings.HasPrefix(a.Name(), "tiny@") {
		t.Fatalf("names %q, %q", a.Name(), b.Name())
	}
	if other := load(t, tinyModel(t, 2), Options{}); other.Name() == a.Name() {
		t.Fatalf("two different models are both named %q", a.Name())
	}
	va, vb := encode(t, a, sentences...), encode(t, b, sentences...)
	for i, v := range va {
		var n float64
		for j, x := range v {
			n += float64(x) * float64(x)
			if x != vb[i][j] {
				t.Fatalf("%q: two loads give different vectors", sentences[i])
			}
		}
		if math.Abs(math.Sqrt(n)-1) > 1e-5 {
			t.Errorf("%q: norm %v", sentences[i], math.Sqrt(n))
		}
	}
	one, again := encode(t, a, sentences[0]), encode(t, b, sentences[0])
	if maxAbsDiff(one[0], again[0]) != 0 {
		t.Error("the same text encoded twice differs")
	}
	// In a batch OpenBLAS may sum in another order: equal to float32 rounding.
	if d := maxAbsDiff(one[0], va[0]); d > 1e-6 {
		t.Errorf("alone and in a batch differ by %.2g", d)
	}
	if cosine(va[0], va[1]) > 0.9999 {
		t.Error("different texts give the same vector")
	}
}

func TestBatchEqualsOneAtATime(t *testing.T) {
	dir := tinyModel(t, 5)
	for _, k := range availableKernels() {
		t.Run(k, func(t *testing.T) {
			e := load(t, dir, Options{Kernel: k, Threads: 2, BatchTokens: 40})
			batch := encode(t, e, sentences...)
			for i, s := range sentences {
				one := encode(t, e, s)[0]
				d := maxAbsDiff(one, batch[i])
				if k == "go" && d != 0 || d > 1e-6 {
					t.Errorf("%q: alone and in a batch differ by %.2g", s, d)
				} else if d != 0 {
					t.Logf("%q: alone and in a batch differ by %.2g", s, d)
				}
			}
		})
	}
}

func TestTruncation(t *testing.T) {
	dir := tinyModel(t, 1)
	e := load(t, dir, Options{MaxTokens: 16}).(*BERT)
	long := strings.Repeat("the quick brown fox jumps over the lazy dog ", 100)
	if n := len(e.Tokens(long)); n != 16 {
		t.Fatalf("%d tokens, want 16", n)
	}
	full := load(t, dir, Options{}).(*BERT)
	if n := len(full.Tokens(long)); n != testmodel.Tiny().MaxPositions {
		t.Fatalf("%d tokens, want the model's %d positions", n, testmodel.Tiny().MaxPositions)
	}
	v := encode(t, full, long, "short")
	if len(v[0]) != full.Dim() {
		t.Fatal("no vector for a text longer than the model")
	}
}

func TestConcurrentEncode(t *testing.T) {
	dir := tinyModel(t, 1)
	e := load(t, dir, Options{Threads: 3, BatchTokens: 30})
	want := encode(t, e, sentences...)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 5 {
				i := (g + r) % len(sentences)
				texts := append([]string{sentences[i]}, sentences...)
				got, err := e.Encode(texts)
				if err != nil {
					errs <- err
					return
				}
				if maxAbsDiff(got[0], want[i]) > 1e-6 || maxAbsDiff(got[len(got)-1], want[len(want)-1]) > 1e-6 {
					errs <- fmt.Errorf("goroutine %d: %q encoded differently", g, sentences[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClose(t *testing.T) {
	e := load(t, tinyModel(t, 1), Options{})
	if v := encode(t, e); len(v) != 0 {
		t.Fatal("vectors for no texts")
	}
	e.Close()
	if _, err := e.Encode([]string{"x"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Encode after Close: %v", err)
	}
	if e.Dim() != testmodel.Tiny().Hidden || e.Close() != nil {
		t.Fatal("Dim or a second Close after Close")
	}
}
