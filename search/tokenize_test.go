package search

import (
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	cases := map[string]string{
		"The cats are running to Caroline's house!": "cat run carolin hous",
		"I don't know":                    "dont know",
		"John won; we went and bought it": "john win go buy",
		"2023 LGBTQ support groups":       "2023 lgbtq support group",
		"我喜欢拉面":                           "我喜 喜欢 欢拉 拉面",
		"猫":                               "猫",
		"東京タワーに行った":                       "東京 京タ タワ ワー ーに に行 行っ った",
		"mixed英文text":                     "mix 英文 text",
		strings.Repeat("x", 50) + " ok":   "",
	}
	for in, want := range cases {
		if got := strings.Join(Tokens(in), " "); got != want {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestIrregularFormsMatch: a question in one tense finds a memory in
// another, where stemming alone would not join the two.
func TestIrregularFormsMatch(t *testing.T) {
	x := NewIndex()
	x.Put(1, []Part{{Part: 0, Text: "Our team won the final, then we went out and ate pizza"}}, 100, "a")
	x.Put(2, []Part{{Part: 0, Text: "The final is on Sunday"}}, 100, "b")
	for _, q := range []string{"who wins the final", "did they win", "going out to eat"} {
		hits := x.Search(Tokens(q), Options{K: 10})
		if len(hits) == 0 || hits[0].Ino != 1 {
			t.Errorf("%q: hits %+v, want memory 1 first", q, hits)
		}
	}
	if len(irregular) < 500 || irregular["children"] != "" {
		t.Errorf("irregular.txt: %d verb forms (want WordNet's, over 500, and no nouns)", len(irregular))
	}
}

func BenchmarkTokens(b *testing.B) {
	text := strings.Repeat("Caroline went to the LGBTQ support group yesterday and talked about adoption agencies. ", 12)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		Tokens(text)
	}
}

// TestTokensAllocations: words the stemmer's memo has seen are not made
// strings again; tokenizing a text allocates its result and little else.
// (A string a word was most of what an index build allocated for text.)
func TestTokensAllocations(t *testing.T) {
	text := strings.Repeat("Caroline went to the LGBTQ support group yesterday and talked about adoption agencies. ", 4)
	Tokens(text) // the words into the memo
	if n := testing.AllocsPerRun(50, func() { Tokens(text) }); n > 2 {
		t.Errorf("Tokens allocates %v times a call, want at most 2 (its result)", n)
	}
}
