package embed

import (
	"context"
	"math"
	"testing"

	"github.com/mnemofs/mnemofs/embed/testmodel"
	cbert "github.com/nlpodyssey/cybertron/pkg/models/bert"
	textencoding "github.com/nlpodyssey/cybertron/pkg/tasks/textencoding/bert"
	"github.com/nlpodyssey/spago/mat"
)

var sentences = []string{
	"Alice is vegetarian and likes ramen.",
	"The quick brown fox jumps over the lazy dog!",
	"hi",
	"Zermatt trip budget: 500 CHF for the hotel, train tickets and ski passes; remember to book early.",
	"Unbelievably, xyzzyq plugh — tokens the vocabulary lacks.",
	"",
}

// cybertronVectors encodes each sentence with cybertron's own encoder
// (mean pooling) and L2-normalises the result.
func cybertronVectors(t testing.TB, dir string, texts []string) [][]float32 {
	t.Helper()
	te, err := textencoding.LoadTextEncoding(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for _, s := range texts {
		r, err := te.Encode(context.Background(), s, int(cbert.MeanPooling))
		if err != nil {
			t.Fatal(err)
		}
		v := mat.Data[float32](r.Vector)
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		w := make([]float32, len(v))
		for i, x := range v {
			w[i] = float32(float64(x) / math.Sqrt(n))
		}
		out = append(out, w)
	}
	return out
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func maxAbsDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

func TestSameAsCybertron(t *testing.T) {
	// One layer of all-MiniLM-L6-v2's width (12 heads of 32, 1536
	// intermediate) with the small vocabulary, besides Tiny.
	wide := testmodel.Tiny()
	wide.Name, wide.Layers, wide.Hidden, wide.Heads, wide.Intermediate, wide.Std = "wide", 1, 384, 12, 1536, 0.05
	for _, shape := range []testmodel.Shape{testmodel.Tiny(), wide} {
		t.Run(shape.Name, func(t *testing.T) { sameAsCybertron(t, shape) })
	}
}

func sameAsCybertron(t *testing.T, shape testmodel.Shape) {
	dir := t.TempDir()
	if err := testmodel.Write(dir, shape, 7); err != nil {
		t.Fatal(err)
	}
	want := cybertronVectors(t, dir, sentences)
	for _, kname := range availableKernels() {
		t.Run(kname, func(t *testing.T) {
			e, err := LoadWith(dir, Options{Kernel: kname})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			got, err := e.Encode(sentences) // one batch of different lengths
			if err != nil {
				t.Fatal(err)
			}
			for i := range sentences {
				c, d := cosine(got[i], want[i]), maxAbsDiff(got[i], want[i])
				t.Logf("%q: cosine %.8f, max abs diff %.2g", sentences[i], c, d)
				if c < 0.99999 || d > 1e-5 {
					t.Errorf("%q: cosine %.8f, max abs diff %.2g against cybertron", sentences[i], c, d)
				}
			}
		})
	}
}
