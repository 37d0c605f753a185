package search

// Tuning holds the ranking's parameters. DefaultTuning is what searches
// use; a benchmark harness may pass others (Options.Tuning) to choose them
// on data it holds out from its report (scripts/locomo -loo).
type Tuning struct {
	// K1 and B are BM25's. B is below the usual 0.75: memories are
	// short, and a long one is more often rich than padded.
	K1, B float64
	// Back is the share of the neighbour weight at which a window reaches
	// back, Decay the factor of each further step (window.go).
	Back, Decay float64
	// Prior scales the sequence prior: every member of a sequence also
	// scores its sequence's best window (Search).
	Prior float64
	// Reply is the weight at which a question's words (a document with a
	// '?') count in the window of the document after it, its reply
	// (0: the neighbour weight, as any other).
	Reply float64
	// Meta is the weight at which a query term also matches the metadata
	// field (Part.Meta: a speaker, users, tags), beyond the text.
	Meta float64
	// Ask lowers the score of a turn of a sequence that asks (holds a
	// '?') by this share: a question is less often the answer than its
	// reply.
	Ask float64
	// Cover is the exponent of a plain document's coverage factor: its
	// score is multiplied by (m/n)^Cover for m of the query's n terms
	// matched (0: off; cover.go). LoCoMo, whose turns are windows, ranks
	// the same at 0, 1 and 2; at 2 a note holding both words of a
	// two-word query outranks one holding one of them up to four times
	// its score (a rare tag's metadata match is worth that much). Windows
	// take no factor: on LoCoMo it cost 0.028 of recall@5.
	Cover float64
	// Synonyms, Hyponyms and When weigh the expansion terms (Expand;
	// 0: none).
	Synonyms, Hyponyms, When float64
}

// DefaultTuning is the ranking's parameters.
var DefaultTuning = Tuning{K1: 1.2, B: 0.5, Back: 0.5, Decay: 0.5, Prior: 0.5, Reply: 1, Meta: 1.5, Ask: 0.1, Cover: 2,
	Synonyms: 0.2, Hyponyms: 0.2, When: 0.2}
