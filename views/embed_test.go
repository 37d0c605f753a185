package views

import (
	"errors"
	"hash/fnv"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

// hashEncoder is a small real encoder for the pipeline's tests: the sum of
// a pseudo-random vector per token, L2-normalised (texts sharing words get
// close vectors). It records what it was asked to encode and can be told
// to fail. The BERT encoder is tested in embed/ and through the mount.
type hashEncoder struct {
	name string
	dim  int               // 32 when 0
	syn  map[string]string // words read as others (a model that knows synonyms)
	rand bool              // a vector from the whole text: a model that knows nothing
	mu   sync.Mutex
	seen []string
	fail error
}

func (h *hashEncoder) Name() string { return h.name }
func (h *hashEncoder) Dim() int {
	if h.dim == 0 {
		return 32
	}
	return h.dim
}

func (h *hashEncoder) Encode(texts []string) ([][]float32, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail != nil {
		return nil, h.fail
	}
	h.seen = append(h.seen, texts...)
	out := make([][]float32, len(texts))
	for k, t := range texts {
		v := make([]float32, h.Dim())
		words := strings.Fields(strings.ToLower(t))
		if h.rand {
			words = []string{t}
		}
		for _, w := range words {
			if s, ok := h.syn[w]; ok {
				w = s
			}
			f := fnv.New64a()
			f.Write([]byte(w))
			x := f.Sum64()
			for d := range v {
				x = x*6364136223846793005 + 1442695040888963407
				v[d] += float32(int64(x>>11)%1000)/1000 - 0.5
			}
		}
		var n float64
		for _, f := range v {
			n += float64(f * f)
		}
		if n == 0 {
			v[0], n = 1, 1
		}
		for d := range v {
			v[d] /= float32(math.Sqrt(n))
		}
		out[k] = v
	}
	return out, nil
}

func (h *hashEncoder) encoded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

type embedFixture struct {
	t   *testing.T
	dir string
	kv  backend.KV
	st  *store.Store
	e   *Engine
}

func openEmbed(t *testing.T, dir string, enc Encoder) *embedFixture {
	t.Helper()
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(nil)
	if enc != nil {
		e.SetEncoder(enc)
	}
	st, err := store.Open(kv, store.Options{OnChange: e.Handle, ScratchAge: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(st)
	return &embedFixture{t, dir, kv, st, e}
}

func (f *embedFixture) close() {
	f.e.Stop()
	f.st.Close()
	f.kv.Close()
}

func (f *embedFixture) write(name, text string) uint64 {
	f.t.Helper()
	ino, err := f.st.Resolve("/" + name)
	if err != nil {
		in, cerr := f.st.Create(store.RootIno, name, 0o644, store.Owner{})
		if cerr != nil {
			f.t.Fatal(cerr)
		}
		ino = in.Ino
	}
	err = f.st.Open(ino, false)
	if err == nil {
		err = f.st.Truncate(ino, 0)
		if err == nil {
			_, err = f.st.WriteAt(ino, []byte(text), 0)
		}
		err = errors.Join(err, f.st.Release(ino))
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return ino
}

// settle waits until every memory is embedded or the backlog is empty.
func (f *embedFixture) settle() *EmbedStats {
	f.t.Helper()
	f.e.Ready()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := f.e.EmbedStats()
		if s.Backlog == 0 {
			return s
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("embedding backlog stuck: %+v", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *embedFixture) vectorKeys() int {
	n := 0
	err := f.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.VectorPrefix(), nil, true, func(_, _ []byte) bool { n++; return true })
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// TestEmbeddingPipeline: memories are embedded in the background, again
// when they change, forgotten when removed; after a restart nothing
// already embedded is encoded again, what changed while no model was
// loaded (or failed) is; another model starts over.
func TestEmbeddingPipeline(t *testing.T) {
	dir := t.TempDir()
	enc := &hashEncoder{name: "hash-a"}
	f := openEmbed(t, dir, enc)
	f.write("a.md", "the night train to Lisbon")
	f.write("b.md", "a recipe for ramen")
	c := f.write("c.md", "notes on the budget")
	if s := f.settle(); s.Memories != 3 || s.Vectors != 3 || s.Failed != 0 {
		t.Fatalf("after three writes: %+v", s)
	}
	f.write("a.md", "the morning flight to Porto")
	f.settle()
	if seen := enc.encoded(); !strings.Contains(seen[len(seen)-1], "morning flight to Porto") {
		t.Fatalf("the rewrite was not embedded again: %q", seen)
	}
	if _, err := f.st.Remove(store.RootIno, "c.md"); err != nil { // to the trash: still a memory
		t.Fatal(err)
	}
	p, _ := f.st.Path(c)
	d, _ := f.st.Resolve(filepath.Dir(p))
	if _, err := f.st.Remove(d, filepath.Base(p)); err != nil { // gone for good
		t.Fatal(err)
	}
	if s := f.settle(); s.Memories != 2 || f.vectorKeys() != 2 {
		t.Fatalf("after a removal: %+v, %d stored", s, f.vectorKeys())
	}
	f.close()

	// Restart with the same model: nothing to encode.
	enc2 := &hashEncoder{name: "hash-a"}
	f = openEmbed(t, dir, enc2)
	if s := f.settle(); s.Memories != 2 || len(enc2.encoded()) != 0 {
		t.Fatalf("after a restart: %+v, encoded %q", s, enc2.encoded())
	}
	f.close()

	// A change while no model is loaded, and a model that fails.
	f = openEmbed(t, dir, nil)
	f.write("a.md", "the evening bus to Faro")
	f.close()
	broken := &hashEncoder{name: "hash-a", fail: errors.New("out of memory")}
	f = openEmbed(t, dir, broken)
	f.write("d.md", "a new memory while the model fails")
	if s := f.settle(); s.Failed == 0 || s.LastError == "" {
		t.Fatalf("a failing model: %+v", s)
	}
	f.close()
	enc3 := &hashEncoder{name: "hash-a"}
	f = openEmbed(t, dir, enc3)
	s := f.settle()
	got := strings.Join(enc3.encoded(), "|")
	if s.Memories != 3 || !strings.Contains(got, "evening bus to Faro") || !strings.Contains(got, "model fails") || strings.Contains(got, "ramen") {
		t.Fatalf("after the offline change and the failure: %+v, encoded %q", s, got)
	}
	f.close()

	// Another model: every memory again.
	enc4 := &hashEncoder{name: "hash-b"}
	f = openEmbed(t, dir, enc4)
	defer f.close()
	if s := f.settle(); s.Memories != 3 || len(enc4.encoded()) != 3 || s.Model != "hash-b" {
		t.Fatalf("another model: %+v, encoded %q", s, enc4.encoded())
	}
}

func TestChunkText(t *testing.T) {
	long := strings.Repeat("word ", 1000) // 5,000 chars
	cs := chunkText(long)
	if len(cs) < 5 || len(cs) > 6 {
		t.Fatalf("%d chunks", len(cs))
	}
	for _, c := range cs {
		if len(c) > chunkChars || c == "" {
			t.Fatalf("chunk of %d", len(c))
		}
	}
	if n := len(chunkText(strings.Repeat("x", 100*chunkChars))); n != chunksMax {
		t.Fatalf("%d chunks of a huge word, want %d", n, chunksMax)
	}
	if cs := chunkText("  "); len(cs) != 0 {
		t.Fatalf("blank: %q", cs)
	}
	cjk := strings.Repeat("記憶", 800)
	for _, c := range chunkText(cjk) {
		if !strings.HasPrefix(c, "記") && !strings.HasPrefix(c, "憶") {
			t.Fatalf("a chunk cut a rune: %q", c[:6])
		}
	}
}
