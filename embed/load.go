package embed

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nlpodyssey/cybertron/pkg/models/bert"
	"github.com/nlpodyssey/cybertron/pkg/tokenizers/wordpiecetokenizer"
	"github.com/nlpodyssey/cybertron/pkg/vocabulary"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	"github.com/nlpodyssey/spago/nn/activation"
	"github.com/nlpodyssey/spago/nn/linear"
	"github.com/nlpodyssey/spago/nn/normalization/layernorm"
)

// The files of a model directory, as cybertron v0.2.1 names them.
const (
	ConfigFile          = "config.json"
	TokenizerConfigFile = "tokenizer_config.json"
	VocabFile           = "vocab.txt"
	WeightsFile         = "spago_model.bin"
)

// files is what Load reads from a model directory.
type files struct {
	dir       string
	lowerCase bool
	vocab     *vocabulary.Vocabulary
	tokenizer *wordpiecetokenizer.WordPieceTokenizer
	model     *bert.ModelForSequenceEncoding
	sum       string // sha256 of the four files, hex
}

func readFiles(dir string) (*files, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("embed: model directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("embed: model directory %s: not a directory", dir)
	}
	f := &files{dir: dir}
	h := sha256.New()

	var cfg struct {
		ModelType string `json:"model_type"`
	}
	if err := f.readJSON(h, ConfigFile, &cfg); err != nil {
		return nil, err
	}
	if cfg.ModelType != "bert" {
		return nil, fmt.Errorf("embed: %s: model_type is %q, only \"bert\" sentence encoders are supported", f.path(ConfigFile), cfg.ModelType)
	}
	var tok bert.TokenizerConfig
	if err := f.readJSON(h, TokenizerConfigFile, &tok); err != nil {
		return nil, err
	}
	f.lowerCase = tok.DoLowerCase

	if err := f.readVocab(h); err != nil {
		return nil, err
	}
	if err := f.readWeights(h); err != nil {
		return nil, err
	}
	f.sum = hex.EncodeToString(h.Sum(nil))
	return f, nil
}

func (f *files) path(name string) string { return filepath.Join(f.dir, name) }

func (f *files) open(name string) (*os.File, error) {
	r, err := os.Open(f.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("embed: %s is missing (a cybertron model directory has %s, %s, %s and %s)",
			f.path(name), ConfigFile, TokenizerConfigFile, VocabFile, WeightsFile)
	}
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return r, nil
}

func (f *files) readJSON(h hash.Hash, name string, v any) error {
	r, err := f.open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := json.NewDecoder(io.TeeReader(r, h)).Decode(v); err != nil {
		return fmt.Errorf("embed: %s: not a valid JSON configuration: %w", f.path(name), err)
	}
	return nil
}

func (f *files) readVocab(h hash.Hash) error {
	r, err := f.open(VocabFile)
	if err != nil {
		return err
	}
	r.Close()
	b, err := os.ReadFile(f.path(VocabFile))
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	h.Write(b)
	v, err := vocabulary.NewFromFile(f.path(VocabFile))
	if err != nil {
		return fmt.Errorf("embed: %s: %w", f.path(VocabFile), err)
	}
	for _, special := range []string{wordpiecetokenizer.DefaultUnknownToken,
		wordpiecetokenizer.DefaultClassToken, wordpiecetokenizer.DefaultSequenceSeparator} {
		if _, ok := v.ID(special); !ok {
			return fmt.Errorf("embed: %s: no %s token (not a BERT wordpiece vocabulary?)", f.path(VocabFile), special)
		}
	}
	f.vocab = v
	f.tokenizer = wordpiecetokenizer.New(v)
	return nil
}

func (f *files) readWeights(h hash.Hash) (err error) {
	r, err := f.open(WeightsFile)
	if err != nil {
		return err
	}
	defer r.Close()
	defer func() { // gob and spago's decoders panic on some corrupt input
		if p := recover(); p != nil {
			err = fmt.Errorf("embed: %s: corrupt spago weights file: %v", f.path(WeightsFile), p)
		}
	}()
	m, err := nn.Load[*bert.ModelForSequenceEncoding](io.TeeReader(r, h))
	if err != nil {
		return fmt.Errorf("embed: %s: not a spago BERT sentence encoder (gob of *bert.ModelForSequenceEncoding): %w", f.path(WeightsFile), err)
	}
	if m == nil || m.Bert == nil || m.Bert.Embeddings == nil || m.Bert.Encoder == nil {
		return fmt.Errorf("embed: %s: incomplete BERT model", f.path(WeightsFile))
	}
	f.model = m
	return nil
}

// weights copies the parameters of the cybertron model into contiguous
// float32 row-major matrices, checking every shape.
func (f *files) weights() (m *model, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("embed: %s: %v", f.path(WeightsFile), p)
		}
	}()
	b := f.model.Bert
	c := b.Config
	e := b.Embeddings
	if c.NumAttentionHeads <= 0 || c.HiddenSize <= 0 || c.HiddenSize%c.NumAttentionHeads != 0 {
		return nil, fmt.Errorf("embed: %s: hidden size %d is not a multiple of %d heads", f.path(WeightsFile), c.HiddenSize, c.NumAttentionHeads)
	}
	if e.Tokens == nil || e.Positions == nil || e.TokenTypes == nil || e.Norm == nil {
		return nil, fmt.Errorf("embed: %s: embeddings incomplete", f.path(WeightsFile))
	}
	// The tokenizer gives ids of vocab.txt; the model must have a row for each.
	if n := len(f.vocab.Items()); n > e.Tokens.Size {
		return nil, fmt.Errorf("embed: %s has %d tokens, the model in %s only %d embeddings", f.path(VocabFile), n, f.path(WeightsFile), e.Tokens.Size)
	}
	emb := e.Tokens.Dim
	m = &model{
		hidden: c.HiddenSize, heads: c.NumAttentionHeads, inter: c.IntermediateSize,
		embDim: emb, maxPos: e.Positions.Size,
		tokens:    rows(e.Tokens.Weights, emb),
		positions: rows(e.Positions.Weights, emb),
		tokenType: vec(e.TokenTypes.Weights[0].Matrix, emb),
		embNorm:   norm(e.Norm, emb),
	}
	if e.Projector != nil {
		m.proj = dense(e.Projector, emb, c.HiddenSize)
	} else if emb != c.HiddenSize {
		return nil, fmt.Errorf("embed: %s: embeddings are %d wide, hidden size %d, and no projection", f.path(WeightsFile), emb, c.HiddenSize)
	}
	H := c.HiddenSize
	dh := H / c.NumAttentionHeads
	for i, l := range b.Encoder.Layers {
		att := l.SelfAttention.Attention
		if len(att.Heads) != c.NumAttentionHeads {
			return nil, fmt.Errorf("embed: %s: layer %d has %d heads, config says %d", f.path(WeightsFile), i, len(att.Heads), c.NumAttentionHeads)
		}
		// One fused projection: rows [0,H) queries, [H,2H) keys, [2H,3H)
		// values; within each, head after head (as in Hugging Face's weights).
		qkv := linearT{out: 3 * H, in: H, w: make([]float32, 3*H*H), b: make([]float32, 3*H)}
		for j, hd := range att.Heads {
			for k, lin := range []*linear.Model{hd.Query, hd.Key, hd.Value} {
				part := dense(lin, H, dh)
				row := k*H + j*dh
				copy(qkv.w[row*H:(row+dh)*H], part.w)
				copy(qkv.b[row:row+dh], part.b)
			}
		}
		act, ok := l.FF.MLP[1].(*activation.Model)
		if !ok || len(l.FF.MLP) != 3 {
			return nil, fmt.Errorf("embed: %s: layer %d: unexpected feed-forward block", f.path(WeightsFile), i)
		}
		if act.Activation != activation.GELU {
			return nil, fmt.Errorf("embed: %s: layer %d: activation %v, only GELU is supported", f.path(WeightsFile), i, act.Activation)
		}
		m.layers = append(m.layers, layer{
			qkv:   qkv,
			out:   dense(att.OutputMerge, H, H),
			norm1: norm(l.SelfAttention.Norm, H),
			ffIn:  dense(l.FF.MLP[0].(*linear.Model), H, c.IntermediateSize),
			ffOut: dense(l.FF.MLP[2].(*linear.Model), c.IntermediateSize, H),
			norm2: norm(l.FF.Norm, H),
		})
	}
	if len(m.layers) == 0 {
		return nil, fmt.Errorf("embed: %s: no encoder layers", f.path(WeightsFile))
	}
	return m, nil
}

// vec copies a parameter of n values.
func vec(t mat.Tensor, n int) []float32 {
	if t == nil {
		panic("missing parameter")
	}
	if t.Size() != n {
		panic(fmt.Sprintf("parameter has %d values, want %d", t.Size(), n))
	}
	return append([]float32(nil), t.Data().F32()...)
}

// rows copies an embedding table into one len(ps)×dim matrix.
func rows(ps []*nn.Param, dim int) []float32 {
	out := make([]float32, 0, len(ps)*dim)
	for _, p := range ps {
		out = append(out, vec(p.Matrix, dim)...)
	}
	return out
}

func dense(l *linear.Model, in, out int) linearT {
	if l == nil || l.W == nil || l.B == nil {
		panic("missing linear layer")
	}
	if s := l.W.Shape(); len(s) != 2 || s[0] != out || s[1] != in {
		panic(fmt.Sprintf("linear layer is %v, want [%d %d]", s, out, in))
	}
	return linearT{out: out, in: in, w: vec(l.W.Matrix, in*out), b: vec(l.B.Matrix, out)}
}

func norm(l *layernorm.Model, n int) layerNorm {
	if l == nil || l.W == nil || l.B == nil || l.Eps == nil {
		panic("missing layer norm")
	}
	return layerNorm{w: vec(l.W.Matrix, n), b: vec(l.B.Matrix, n), eps: l.Eps.Item().F32()}
}
