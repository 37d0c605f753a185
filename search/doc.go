// Package search is the search engine. Lexical: a tokenizer for English
// (stop words, Snowball stemming) and Chinese/Japanese/Korean (character
// bigrams), and a BM25 index whose documents may be grouped
// (the lines of a JSONL log, the turns of a session directory) so that a
// document can draw on its neighbours for context. Vector: an in-memory
// index of L2-normalised chunk embeddings, a memory scoring its best chunk
// (Vectors, vector.go and vsearch.go, with an AVX2 kernel on amd64),
// searched exactly up to ApproxRows vectors and through an inverted-file
// index of trained centroids beyond (ivf.go). Fuse
// merges the two rankings by Reciprocal Rank Fusion in which the vector
// side counts only where it beats noise, so a model that knows nothing
// leaves the lexical ranking as it was (fuse.go).
//
// Lexical ranking (query.go, window.go), with its parameters in Tuning:
//   - A document is a file (Part 0) or one line of a log (Part n); each is
//     ranked on its own, so one log can give many hits. A per-line filter
//     (Options.Line) keeps the lines whose own metadata match.
//   - In a sequence of short documents a document is scored as its
//     context window, and every member also scores its sequence's best
//     window (the sequence prior). A document that asks (holds a '?')
//     lends its words to its reply at full weight and scores a little less
//     itself.
//   - A document's metadata words (Part.Meta: a speaker, users, tags) are
//     a field of their own, matched again by the query's terms.
//   - Coverage: a document scored on its own (not a window) has its score
//     multiplied by (m/n)^Tuning.Cover for m of the query's n terms it
//     matches (in its text or its metadata), so a note holding every word
//     of the query outranks one that shares a single stem with it, even a
//     rare tag's. Windows already saturate each term over their documents.
//   - Query expansion (expand.go): WordNet synonyms and hyponyms of the
//     query's words (search/wordnet reads the database at run time when it
//     is installed; without it they are left out) and, for a question
//     about time, the words memories use to say when; each extra term at
//     a weight below the query's own.
//
// Cost: a query reads only its terms' posting lists, and those in blocks
// of 128 postings that carry bounds of their scores (postings.go). The
// windows are scored in full, from the blocks that hold short documents;
// every other document by MaxScore with block bounds (prune.go): once K
// documents the filters keep are found, blocks and documents that cannot
// beat the K-th are skipped, with the same results as scoring them all.
//
// Persistence (persist.go, segment.go, dict.go): the lexical index is
// saved as a segment, a layout used where it lies; a loaded index reads
// its term dictionary and posting lists from the segment (views maps it
// from the snapshot file) and keeps in the heap only the lists changed
// since and the columns of the documents' table that a search reads at
// random, 21 bytes a document (docs.go); their groups and orders stay in
// the segment.
//
// The indexes are pure: they know documents by key and are fed and
// queried by views. All methods are safe for concurrent use.
package search
