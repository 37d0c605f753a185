// Package search is the search engine. Lexical: a tokenizer for English
// (stop words, Snowball stemming) and Chinese/Japanese/Korean (character
// bigrams), and an in-memory BM25 index whose documents may be grouped
// (the lines of a JSONL log, the turns of a session directory) so that a
// document can draw on its neighbours for context. Vector: an in-memory
// index of L2-normalised chunk embeddings, a memory scoring its best chunk
// (Vectors, vector.go and vsearch.go, with an AVX2 kernel on amd64). Fuse
// merges the two rankings by Reciprocal Rank Fusion in which the vector
// side counts only where it beats noise, so a model that knows nothing
// leaves the lexical ranking as it was (fuse.go).
//
// The indexes are pure: they know documents by key and are fed and
// queried by views. All methods are safe for concurrent use.
package search
