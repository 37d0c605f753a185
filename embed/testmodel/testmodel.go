// Package testmodel writes randomly initialised BERT sentence encoders in the
// directory layout of github.com/nlpodyssey/cybertron v0.2.1 (what
// embed.Load and cybertron's textencoding/bert.LoadTextEncoding read):
//
//	config.json            Hugging Face BERT configuration (model_type "bert")
//	tokenizer_config.json  {"do_lower_case": true, ...}
//	vocab.txt              one wordpiece token a line, the line number is its id
//	spago_model.bin        gob of a *bert.ModelForSequenceEncoding (float32)
//
// The weights are random, so the vectors mean nothing; the shapes, the file
// formats and the amount of arithmetic are those of a real model. Tests use
// Tiny; benchmarks use MiniLM (the shape of all-MiniLM-L6-v2).
package testmodel

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/nlpodyssey/cybertron/pkg/models/bert"
	"github.com/nlpodyssey/cybertron/pkg/vocabulary"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	"github.com/nlpodyssey/spago/nn/activation"
	"github.com/nlpodyssey/spago/nn/linear"
)

// The file names cybertron v0.2.1 uses (pkg/converter/bert, pkg/tasks/textencoding/bert).
const (
	ConfigFile          = "config.json"
	TokenizerConfigFile = "tokenizer_config.json"
	VocabFile           = "vocab.txt"
	WeightsFile         = "spago_model.bin"
)

// Shape is the size of a generated model.
type Shape struct {
	Name         string
	Layers       int
	Hidden       int
	Heads        int
	Intermediate int
	MaxPositions int
	Vocab        []string
	// Std is the standard deviation of the random weights. Larger than a
	// real initialisation's 0.02 for Tiny, so that attention and GELU see
	// values of a trained model's size and tests notice mistakes.
	Std float64
}

// Tiny is a 2-layer, 64-wide model with a ~800-token vocabulary: a few
// hundred kB on disk, milliseconds a sentence.
func Tiny() Shape {
	return Shape{Name: "tiny", Layers: 2, Hidden: 64, Heads: 2, Intermediate: 256,
		MaxPositions: 128, Vocab: TinyVocab(), Std: 0.25}
}

// MiniLM has the shape of sentence-transformers/all-MiniLM-L6-v2: 6 layers,
// 384 wide, 12 heads, 1536 intermediate, 30522 tokens, 512 positions.
func MiniLM() Shape {
	return Shape{Name: "minilm", Layers: 6, Hidden: 384, Heads: 12, Intermediate: 1536,
		MaxPositions: 512, Vocab: MiniLMVocab(30522), Std: 0.05}
}

// ShapeByName returns Tiny or MiniLM.
func ShapeByName(name string) (Shape, error) {
	switch name {
	case "tiny":
		return Tiny(), nil
	case "minilm":
		return MiniLM(), nil
	}
	return Shape{}, fmt.Errorf("testmodel: unknown shape %q (tiny or minilm)", name)
}

// Config returns the Hugging Face configuration of the shape.
func (s Shape) Config() bert.Config {
	c := bert.Config{
		Architectures:             []string{"BertModel"},
		AttentionProbsDropoutProb: 0.1,
		HiddenAct:                 "gelu",
		HiddenDropoutProb:         0.1,
		HiddenSize:                s.Hidden,
		InitializerRange:          0.02,
		IntermediateSize:          s.Intermediate,
		LayerNormEps:              1e-12,
		MaxPositionEmbeddings:     s.MaxPositions,
		ModelType:                 "bert",
		NumAttentionHeads:         s.Heads,
		NumHiddenLayers:           s.Layers,
		PadTokenId:                0,
		PositionEmbeddingType:     "absolute",
		TransformersVersion:       "4.8.2",
		TypeVocabSize:             2,
		UseCache:                  true,
		VocabSize:                 len(s.Vocab),
	}
	return c
}

// Write creates dir (if needed) and writes the four files of a random model
// of the given shape; the same seed gives the same files.
func Write(dir string, s Shape, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := s.Config()
	if err := writeJSON(filepath.Join(dir, ConfigFile), cfg); err != nil {
		return err
	}
	tok := bert.TokenizerConfig{DoLowerCase: true, UnkToken: "[UNK]", SepToken: "[SEP]",
		PadToken: "[PAD]", ClsToken: "[CLS]", MaskToken: "[MASK]",
		TokenizeChineseChars: true, ModelMaxLength: s.MaxPositions}
	if err := writeJSON(filepath.Join(dir, TokenizerConfigFile), tok); err != nil {
		return err
	}
	vocab := strings.Join(s.Vocab, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, VocabFile), []byte(vocab), 0o644); err != nil {
		return err
	}
	m := NewModel(s, seed)
	if err := nn.DumpToFile(m, filepath.Join(dir, WeightsFile)); err != nil {
		return fmt.Errorf("testmodel: writing %s: %w", WeightsFile, err)
	}
	return nil
}

// NewModel builds the random cybertron model that Write serialises, as
// cybertron's converter builds a converted one: the stored config has
// embeddings_size = hidden_size and the vocabulary is attached to the
// embeddings.
func NewModel(s Shape, seed uint64) *bert.ModelForSequenceEncoding {
	cfg := s.Config()
	cfg.EmbeddingsSize = cfg.HiddenSize
	cfg.Cybertron.Training = true
	base := bert.New[float32](cfg)
	base.Embeddings.Vocab = vocabulary.New(s.Vocab)
	m := bert.NewModelForSequenceEncoding(base)
	g := gen{rand.New(rand.NewPCG(seed, 0x6d6e656d6f)), float32(s.Std)}

	e := base.Embeddings
	for _, w := range e.Tokens.Weights {
		g.normal(w, 0)
	}
	for _, w := range e.Positions.Weights {
		g.normal(w, 0)
	}
	for _, w := range e.TokenTypes.Weights {
		g.normal(w, 0)
	}
	g.normal(e.Norm.W, 1)
	g.normal(e.Norm.B, 0)
	for _, l := range base.Encoder.Layers {
		for _, h := range l.SelfAttention.Attention.Heads {
			g.linear(h.Query)
			g.linear(h.Key)
			g.linear(h.Value)
		}
		g.linear(l.SelfAttention.Attention.OutputMerge)
		g.normal(l.SelfAttention.Norm.W, 1)
		g.normal(l.SelfAttention.Norm.B, 0)
		g.linear(l.FF.MLP[0].(*linear.Model))
		if a, ok := l.FF.MLP[1].(*activation.Model); !ok || a.Activation != activation.GELU {
			panic("testmodel: cybertron's feed-forward block changed")
		}
		g.linear(l.FF.MLP[2].(*linear.Model))
		g.normal(l.FF.Norm.W, 1)
		g.normal(l.FF.Norm.B, 0)
	}
	g.linear(base.Pooler.Model[0].(*linear.Model))
	return m
}

type gen struct {
	r   *rand.Rand
	std float32
}

// normal fills p with mean + N(0, std²), std scaled down for the layer
// norms' gains and biases.
func (g gen) normal(p *nn.Param, mean float32) {
	std := g.std
	if mean != 0 {
		std = 0.1 // gains near 1
	}
	d := mat.Data[float32](p.Matrix)
	for i := range d {
		d[i] = mean + std*float32(g.r.NormFloat64())
	}
}

func (g gen) linear(l *linear.Model) {
	g.normal(l.W, 0)
	g.normal(l.B, 0)
}

func writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(b, '\n'), 0o644)
}
