package embed

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/nlpodyssey/cybertron/pkg/tokenizers/wordpiecetokenizer"
	"github.com/nlpodyssey/cybertron/pkg/vocabulary"
)

// Encoder turns texts into sentence vectors.
type Encoder interface {
	// Encode returns one L2-normalised vector of Dim() values per text,
	// the mean of the last hidden states over the text's tokens ([CLS] and
	// [SEP] included, as sentence-transformers' mean pooling does). Texts
	// longer than the model's limit are truncated. Safe for concurrent use.
	Encode(texts []string) ([][]float32, error)
	// Dim is the length of the vectors.
	Dim() int
	// Name identifies the model: the directory's base name and a hash of
	// its files, so vectors stored under one name can be told stale when
	// the model changes.
	Name() string
	// Close releases the model; Encode fails afterwards.
	Close() error
}

// Options tune an Encoder; the zero value is the default.
type Options struct {
	// Threads is how many batches run at once, each on one core
	// (default GOMAXPROCS). Concurrent Encode calls share them.
	Threads int
	// MaxTokens truncates longer texts, [CLS] and [SEP] included (default,
	// and at most, the model's max_position_embeddings).
	MaxTokens int
	// Kernel picks the matrix multiply: "" (the fastest available),
	// "openblas" (an error when it cannot be loaded) or "go".
	Kernel string
	// BatchTokens bounds the tokens of one batch (default 512).
	BatchTokens int
}

// Load reads a cybertron BERT sentence encoder from dir with default options.
func Load(dir string) (Encoder, error) { return LoadWith(dir, Options{}) }

// LoadWith reads a cybertron BERT sentence encoder from dir.
func LoadWith(dir string, o Options) (Encoder, error) {
	k, err := pickKernel(o.Kernel)
	if err != nil {
		return nil, err
	}
	f, err := readFiles(dir)
	if err != nil {
		return nil, err
	}
	m, err := f.weights()
	if err != nil {
		return nil, err
	}
	m.packFor(k)
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.MaxTokens <= 0 || o.MaxTokens > m.maxPos {
		o.MaxTokens = m.maxPos
	}
	o.MaxTokens = max(o.MaxTokens, 2)
	if o.BatchTokens <= 0 {
		o.BatchTokens = 512
	}
	abs, _ := filepath.Abs(dir)
	e := &BERT{
		m: m, k: k, opt: o, tokenizer: f.tokenizer, vocab: f.vocab, lower: f.lowerCase,
		name: filepath.Base(abs) + "@" + f.sum[:12], dim: m.hidden,
		sem: make(chan struct{}, o.Threads),
	}
	e.cls = e.id(wordpiecetokenizer.DefaultClassToken)
	e.sep = e.id(wordpiecetokenizer.DefaultSequenceSeparator)
	return e, nil
}

// BERT is the Encoder Load returns.
type BERT struct {
	m         *model
	k         *kernel
	opt       Options
	tokenizer *wordpiecetokenizer.WordPieceTokenizer
	vocab     *vocabulary.Vocabulary
	lower     bool
	name      string
	dim       int
	cls, sep  int32
	sem       chan struct{} // one slot a running batch
	pool      sync.Pool     // *workspace

	mu     sync.RWMutex
	closed bool
}

// ErrClosed is returned by Encode after Close.
var ErrClosed = errors.New("embed: encoder closed")

func (e *BERT) Dim() int     { return e.dim }
func (e *BERT) Name() string { return e.name }

// Kernel names the matrix multiply in use: "openblas", "go+avx512",
// "go+avx2" or "go".
func (e *BERT) Kernel() string { return e.k.name }

// Threads is how many batches run at once.
func (e *BERT) Threads() int { return e.opt.Threads }

func (e *BERT) Close() error {
	e.mu.Lock()
	e.closed = true
	e.m = nil
	e.mu.Unlock()
	return nil
}

func (e *BERT) id(tok string) int32 {
	id, ok := e.vocab.ID(tok)
	if !ok {
		id, _ = e.vocab.ID(wordpiecetokenizer.DefaultUnknownToken)
	}
	return int32(id)
}

// Tokens returns the token ids Encode feeds the model for text:
// [CLS], the wordpieces (lower-cased first if the tokenizer config says so),
// [SEP], truncated to MaxTokens.
func (e *BERT) Tokens(text string) []int32 {
	if e.lower {
		text = strings.ToLower(text)
	}
	pieces := e.tokenizer.Tokenize(text)
	if n := e.opt.MaxTokens - 2; len(pieces) > n {
		pieces = pieces[:n]
	}
	ids := make([]int32, 0, len(pieces)+2)
	ids = append(ids, e.cls)
	for _, p := range pieces {
		ids = append(ids, e.id(p.String))
	}
	return append(ids, e.sep)
}

func (e *BERT) Encode(texts []string) ([][]float32, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	toks := make([][]int32, len(texts))
	for i, t := range texts {
		toks[i] = e.Tokens(t)
	}
	// Longest first, so batches are of similar lengths and the long ones
	// start early; no padding is ever computed.
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(toks[b]) - len(toks[a]) })

	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*e.dim)
	for i := range out {
		out[i] = backing[i*e.dim : (i+1)*e.dim : (i+1)*e.dim]
	}
	// Batches of at most BatchTokens tokens, smaller when that keeps more
	// threads busy.
	total := 0
	for _, t := range toks {
		total += len(t)
	}
	limit := min(e.opt.BatchTokens, (total+e.opt.Threads-1)/e.opt.Threads)
	var wg sync.WaitGroup
	var panicked any
	var pmu sync.Mutex
	for lo := 0; lo < len(order); {
		hi, n := lo, 0
		for hi < len(order) && (hi == lo || n+len(toks[order[hi]]) <= limit) {
			n += len(toks[order[hi]])
			hi++
		}
		batch := order[lo:hi]
		lo = hi
		e.sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					pmu.Lock()
					panicked = p
					pmu.Unlock()
				}
				<-e.sem
				wg.Done()
			}()
			e.run(batch, toks, out, n)
		}()
	}
	wg.Wait()
	if panicked != nil {
		return nil, fmt.Errorf("embed: %v", panicked)
	}
	return out, nil
}

// run encodes the texts batch (indices into toks and out) of n tokens in all.
func (e *BERT) run(batch []int, toks [][]int32, out [][]float32, n int) {
	ids := make([]int32, 0, n)
	starts := make([]int, 1, len(batch)+1)
	vecs := make([][]float32, len(batch))
	longest := 0
	for i, b := range batch {
		ids = append(ids, toks[b]...)
		starts = append(starts, len(ids))
		vecs[i] = out[b]
		longest = max(longest, len(toks[b]))
	}
	ws, _ := e.pool.Get().(*workspace)
	if ws == nil || len(ws.ff) < n*e.m.inter || len(ws.scores) < longest*longest {
		ws = e.m.workspace(max(n, e.opt.BatchTokens), max(longest, 64))
	}
	e.m.forward(e.k, ws, ids, starts, vecs)
	e.pool.Put(ws)
}
