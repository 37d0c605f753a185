package search

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/mnemofs/mnemofs/cache"
)

// maxTokenLen drops absurd tokens (base64 blobs, hashes) from the index.
const maxTokenLen = 40

// Tokens splits text into index terms: lower-cased, stemmed English words
// without stop words, numbers, and bigrams of CJK runs. An irregular verb
// form is indexed as its base form ("won" as "win").
func Tokens(text string) []string {
	return AppendTokens(make([]string, 0, len(text)/6), text)
}

// AppendTokens appends the index terms of text to out (Tokens).
func AppendTokens(out []string, text string) []string {
	// The word being read, in a buffer kept across words: a term is
	// made a string only when the stemmer's memo has not seen it (or it
	// is short or a number), and otherwise is the memo's own string.
	var wbuf [64]byte
	word := wbuf[:0]
	var cjk []rune
	flushWord := func() {
		if len(word) == 0 {
			return
		}
		w := word
		word = word[:0]
		switch {
		case len(w) > maxTokenLen:
		case len(w) <= 2 || isDigits(w):
			// Not through the memo: numbers are many and seldom
			// repeated, and would only churn it (its entries, made
			// all along a build, then pin the heap's pages).
			if !stopWords[string(w)] {
				out = append(out, string(w))
			}
		default:
			if t := termMemo.GetBytes(w); t != "" {
				out = append(out, t)
			} // else a stop word, or an irregular form of one ("gotten")
		}
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
			return
		case 1:
			out = append(out, string(cjk))
		default:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			// ASCII fast path.
			i++
			switch {
			case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
				flushCJK()
				word = append(word, c)
				continue
			case c >= 'A' && c <= 'Z':
				flushCJK()
				word = append(word, c+'a'-'A')
				continue
			case c != '\'':
				flushWord()
				flushCJK()
				continue
			}
			i-- // the apostrophe rule below
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = utf8.AppendRune(word, unicode.ToLower(r))
		case r == '\'' || r == '’':
			// "Caroline's" → "caroline": drop the possessive.
			flushCJK()
			if i < len(text) && (text[i] == 's' || text[i] == 't') && (i+1 >= len(text) || !isWordByte(text[i+1])) {
				if text[i] == 't' {
					word = append(word, 't') // keep "don't" as "dont"
				}
				i++
			}
			flushWord()
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b >= 0x80
}

func isDigits[S ~string | ~[]byte](s S) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isCJK reports scripts written without spaces between words.
func isCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo: no CJK script
		return false
	}
	return r == 'ー' || r == '々' || unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// stopWords are English function words that carry no topic.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be
	because been before being below between both but by can could did do does doing down during each
	few for from further had has have having he her here hers herself him himself his how i if in into
	is it its itself just me more most my myself no nor not now of off on once only or other our ours
	ourselves out over own same she should so some such than that the their theirs them themselves then
	there these they this those through to too under until up very was we were what when where which
	while who whom why will with would you your yours yourself yourselves s t d ll m o re ve y
	also did does get got let may might must shall us yes ok oh hey`) {
		m[w] = true
	}
	return m
}()

// term is the index term of a word: "" for a stop word (or an irregular
// form of one), the word itself when short or a number, else its Snowball
// stem after irregular's mapping.
func term(w string) string {
	if stopWords[w] {
		return ""
	}
	if len(w) <= 2 || isDigits(w) {
		return w
	}
	if b, ok := irregular[w]; ok {
		if stopWords[b] {
			return ""
		}
		w = b
	}
	return english.Stem(w, false)
}

// termMemo memoises term, which costs far more than a lookup (a language's
// working vocabulary fits easily); a word found there is not made a
// string again.
var termMemo = cache.NewMemo(1<<17, term)

//go:generate go run gen_irregular.go

//go:embed irregular.txt
var irregularTxt string

// irregular maps the irregular English verb forms that stemming cannot
// join to their base ("went" → "go", "won" → "win"; from WordNet's
// exception list, irregular.txt), so that a question that asks who won
// finds the memory that says who won. (On LoCoMo: recall@5 0.753 →
// 0.759, higher in each of the five conversations.) A form that is also a noun keeps one
// index term with the verb ("saw", "left"): the cost of the rule.
var irregular = func() map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(irregularTxt, "\n") {
		if form, base, ok := strings.Cut(l, " "); ok && !strings.HasPrefix(l, "#") {
			m[form] = base
		}
	}
	return m
}()
