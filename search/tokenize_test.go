package search

import (
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	cases := map[string]string{
		"The cats are running to Caroline's house!": "cat run carolin hous",
		"I don't know":                  "dont know",
		"2023 LGBTQ support groups":     "2023 lgbtq support group",
		"我喜欢拉面":                         "我喜 喜欢 欢拉 拉面",
		"猫":                             "猫",
		"東京タワーに行った":                     "東京 京タ タワ ワー ーに に行 行っ った",
		"mixed英文text":                   "mix 英文 text",
		strings.Repeat("x", 50) + " ok": "",
	}
	for in, want := range cases {
		if got := strings.Join(Tokens(in), " "); got != want {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkTokens(b *testing.B) {
	text := strings.Repeat("Caroline went to the LGBTQ support group yesterday and talked about adoption agencies. ", 12)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		Tokens(text)
	}
}
