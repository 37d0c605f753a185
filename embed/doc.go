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
// The matrix products take almost all the time. Three ways to make them
// fast were weighed, measured with scripts/bench-embed.sh (all-MiniLM-L6-v2's
// shape, 28-token sentences; numbers in the lead's BENCHMARKS.md):
//
//   - OpenBLAS's cblas_sgemm, loaded at run time with purego (dlopen of
//     libopenblas.so.0: no cgo, no headers, nothing needed at build time).
//     On this AVX-512 machine it runs the forward pass at about two thirds
//     of the float32 matmul ceiling numpy measures with the same library.
//     It is the default wherever the library is installed (Debian:
//     libopenblas0-pthread).
//   - cgo behind a build tag: the same library, but a binary built without
//     the tag (or without a C toolchain) would not have it; purego gives
//     the same calls to every build.
//   - A hand-written assembly micro-kernel: competitive only with a lot of
//     per-microarchitecture work (AVX-512 packing and blocking) that
//     OpenBLAS already did.
//
// Without OpenBLAS (a fresh machine, other systems) the pure-Go kernel of
// gemm_go.go runs: register-tiled 4×4 dot products, slower by an order of
// magnitude but needing nothing. Options.Kernel forces one or the other.
// GELU and softmax's exponentials use AVX2/FMA assembly where the CPU has
// it (x/sys/cpu), scalar Go elsewhere; without that they would have taken
// a third of the time.
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
