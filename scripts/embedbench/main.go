// Command embedbench measures sentence-embedding throughput of a model
// directory (see scripts/testmodel) with embed's encoder or with
// cybertron v0.2.1 as it is, on sentences of a fixed token count:
//
//	go run ./scripts/embedbench -model DIR [-impl embed|cybertron] [-threads N] [-runs 5]
//
// It prints one line: impl, kernel, threads, tokens a sentence, the median
// and the spread of sentences/s over the runs, and the GFLOP/s that makes
// (FLOPs a sentence from the model's shape: the matrix products only).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/embed"
	"github.com/mnemofs/mnemofs/embed/testmodel"
	cbert "github.com/nlpodyssey/cybertron/pkg/models/bert"
	textencoding "github.com/nlpodyssey/cybertron/pkg/tasks/textencoding/bert"
)

func main() {
	dir := flag.String("model", "", "model directory")
	impl := flag.String("impl", "embed", "embed (this package's forward pass) or cybertron (cybertron's encoder, one sentence a call)")
	threads := flag.Int("threads", runtime.NumCPU(), "threads (GOMAXPROCS, and embed's Options.Threads)")
	kernel := flag.String("kernel", "", "embed's kernel: openblas, go, or empty for the fastest")
	tokens := flag.Int("tokens", 28, "tokens a sentence, [CLS] and [SEP] included")
	n := flag.Int("sentences", 256, "sentences a run")
	runs := flag.Int("runs", 5, "timed runs (after one warm-up run)")
	batch := flag.Int("batch-tokens", 0, "embed's Options.BatchTokens (0: its default)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed runs to this file")
	flag.Parse()
	if *dir == "" {
		fail(fmt.Errorf("-model is required"))
	}
	runtime.GOMAXPROCS(*threads)

	e, err := embed.LoadWith(*dir, embed.Options{Threads: *threads, Kernel: *kernel, BatchTokens: *batch})
	if err != nil {
		fail(err)
	}
	bert := e.(*embed.BERT)
	texts := sentences(bert, *n, *tokens)

	var encode func([]string) error
	kname := bert.Kernel()
	switch *impl {
	case "embed":
		encode = func(ts []string) error { _, err := e.Encode(ts); return err }
	case "cybertron":
		kname = "spago"
		e.Close()
		te, err := textencoding.LoadTextEncoding(*dir)
		if err != nil {
			fail(err)
		}
		encode = func(ts []string) error {
			for _, t := range ts {
				if _, err := te.Encode(context.Background(), t, int(cbert.MeanPooling)); err != nil {
					return err
				}
			}
			return nil
		}
	default:
		fail(fmt.Errorf("unknown -impl %q", *impl))
	}

	if err := encode(texts[:min(len(texts), 8)]); err != nil { // warm-up
		fail(err)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	var rates []float64
	for range *runs {
		start := time.Now()
		if err := encode(texts); err != nil {
			fail(err)
		}
		rates = append(rates, float64(len(texts))/time.Since(start).Seconds())
	}
	slices.Sort(rates)
	med := rates[len(rates)/2]
	flops := flopsPerSentence(*dir, *tokens)
	out, _ := json.Marshal(map[string]any{
		"impl": *impl, "kernel": kname, "threads": *threads, "tokens": *tokens,
		"sentences_per_s": round(med), "min": round(rates[0]), "max": round(rates[len(rates)-1]),
		"gflop_per_sentence": flops / 1e9, "gflops": round(med * flops / 1e9),
	})
	fmt.Println(string(out))
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
}

// sentences makes n different sentences of exactly tokens tokens each, from
// the model's whole-word vocabulary entries.
func sentences(e *embed.BERT, n, tokens int) []string {
	words := strings.Fields(strings.Join(testmodel.TinyVocab(), " "))
	words = slices.DeleteFunc(words, func(w string) bool {
		return len(w) < 2 || strings.HasPrefix(w, "##") || strings.HasPrefix(w, "[") || len(e.Tokens(w)) != 3
	})
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		ws := make([]string, tokens-2)
		for j := range ws {
			ws[j] = words[r.IntN(len(words))]
		}
		out[i] = strings.Join(ws, " ")
		if got := len(e.Tokens(out[i])); got != tokens {
			fail(fmt.Errorf("sentence of %d tokens, want %d", got, tokens))
		}
	}
	return out
}

// flopsPerSentence counts the multiply-adds (×2) of the matrix products of
// one sentence of n tokens: per layer QKV, output and the two feed-forward
// products, 2n(4H²+2HI), and attention's scores and weighted sums, 4n²H.
func flopsPerSentence(dir string, n int) float64 {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		fail(err)
	}
	var c cbert.Config
	if err := json.Unmarshal(b, &c); err != nil {
		fail(err)
	}
	H, I, N := float64(c.HiddenSize), float64(c.IntermediateSize), float64(n)
	return float64(c.NumHiddenLayers) * (2*N*(4*H*H+2*H*I) + 4*N*N*H)
}

func round(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "embedbench:", err)
	os.Exit(1)
}
