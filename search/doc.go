// Package search is the lexical engine: a tokenizer for English (stop
// words, Snowball stemming) and Chinese/Japanese/Korean (character bigrams),
// and an in-memory BM25 index whose documents may be grouped (the lines of
// a JSONL log, the turns of a session directory) so that a document can
// draw on its neighbours for context.
//
// The index is pure: it knows documents by key and is fed and queried by
// views. All methods are safe for concurrent use.
package search
