// Package embed turns texts into sentence vectors with a BERT sentence
// encoder (such as sentence-transformers/all-MiniLM-L6-v2) stored in the
// layout of github.com/nlpodyssey/cybertron v0.2.1:
//
//	config.json            Hugging Face configuration, model_type "bert"
//	tokenizer_config.json  do_lower_case
//	vocab.txt              the wordpiece vocabulary, one token a line
//	spago_model.bin        the weights: a gob of cybertron's *bert.ModelForSequenceEncoding
//
// Load reads those with cybertron and spago (configuration, vocabulary,
// wordpiece tokenizer, weights), then copies the weights once into
// contiguous float32 row-major matrices and runs its own forward pass over
// them; cybertron's model is dropped. The forward pass puts all tokens of
// all sentences of a batch into one matrix, so the query/key/value, output
// and feed-forward projections are matrix–matrix products; attention runs
// per sentence and head on strided views of the fused QKV matrix, so no
// padding is ever computed. It computes what cybertron computes (same
// layer norm epsilon, read from the weights, and spago's tanh form of
// GELU), to float32 rounding: TestSameAsCybertron compares the two. The
// vector is the mean of the last hidden states over the text's tokens,
// L2-normalised.
//
// # Kernel
//
// The matrix products take almost all the time. The three candidates were
// built and measured with scripts/bench-embed.sh (all-MiniLM-L6-v2's shape,
// 28-token sentences, against numpy's float32 matmul on the same machine in
// the same run; on the 2-core AVX-512 machine of the development, about
// 160 GFLOP/s a core):
//
//   - OpenBLAS's cblas_sgemm, loaded at run time with purego (dlopen of
//     libopenblas.so.0: no cgo, no headers, nothing at build time; a binary
//     built anywhere uses it where Debian's libopenblas0-pthread or the
//     like is installed). The fastest: about 65% of the ceiling on one
//     thread, 55–60% on two, including everything that is not a matrix
//     product. The default when the library loads and passes a self-check
//     against the Go kernel (some builds compute wrong products on some
//     processors).
//   - Go assembly micro-kernels (gemm_amd64.s): 6×32 tiles with AVX-512,
//     6×16 with AVX2/FMA, picked by CPUID (x/sys/cpu), over panels packed
//     in Go (the weights packed once at load). About 10% behind OpenBLAS
//     with AVX-512, so the fallback where OpenBLAS is missing, with no
//     dependency at all; it also gives bit-identical vectors whatever the
//     batch (OpenBLAS: equal to 1e-7).
//   - cgo behind a build tag: the same OpenBLAS, but only in binaries built
//     with the tag and a C toolchain, where purego reaches it from every
//     build; not kept.
//
// Elsewhere (no AVX2, other architectures) the 4×4-tiled plain Go kernel of
// gemm_go.go runs, about 20 times slower. Options.Kernel forces "openblas"
// or "go". GELU and softmax's exponentials use AVX2/FMA assembly too where
// the CPU has it (simd_amd64.s): in scalar Go they took a third of the time.
//
// # Threads and concurrency
//
// An Encoder is safe for concurrent use. Encode tokenises, sorts the texts
// by length and cuts them into batches of at most Options.BatchTokens
// tokens; batches run in parallel, each on one goroutine with one
// single-threaded sgemm (OpenBLAS's own threads are set to 1), at most
// Options.Threads (default GOMAXPROCS) at once across all Encode calls.
//
// # Differences from sentence-transformers
//
// Tokenisation is cybertron's wordpiece tokenizer: lower-casing when
// tokenizer_config.json says so, but no accent stripping and no splitting
// around CJK characters, and hyphens are not split off; texts are
// truncated at the model's max_position_embeddings (512; Options.MaxTokens
// lowers it, sentence-transformers uses 256 for all-MiniLM-L6-v2). GELU is
// the tanh approximation, as in cybertron; the exact (erf) GELU of the
// original model moves vectors by about 5e-5.
package embed
