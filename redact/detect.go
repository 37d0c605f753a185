package redact

import (
	"bytes"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// detector finds spans of one kind of secret: its patterns' matches (the
// submatch named "s" when a pattern has one) that check accepts.
type detector struct {
	res []*regexp.Regexp
	// check accepts a match (nil: all); pre and post are the bytes
	// around it.
	check func(m, pre, post []byte) bool
	// cands returns where in a text a match may be (nil: anywhere). Most
	// texts hold no secret and a byte scan is far cheaper than the
	// regexp engine, so the patterns run only on these windows, widened
	// to the whitespace around them (windows).
	cands func(text []byte) [][2]int
}

// find returns the detector's spans in text, ordered.
func (d *detector) find(text []byte) [][]int {
	var wins [][2]int
	if d.cands == nil {
		wins = [][2]int{{0, len(text)}}
	} else if wins = windows(text, d.cands(text)); len(wins) == 0 {
		return nil
	}
	var spans [][]int
	for _, re := range d.res {
		si := re.SubexpIndex("s")
		for _, w := range wins {
			part := text[w[0]:w[1]]
			if si > 0 {
				for _, m := range re.FindAllSubmatchIndex(part, -1) {
					spans = d.keep(spans, text, w[0]+m[2*si], w[0]+m[2*si+1], m[2*si] >= 0)
				}
				continue
			}
			for _, m := range re.FindAllIndex(part, -1) {
				spans = d.keep(spans, text, w[0]+m[0], w[0]+m[1], true)
			}
		}
	}
	if len(d.res) > 1 || len(wins) > 1 {
		sort.Slice(spans, func(i, j int) bool {
			return spans[i][0] < spans[j][0] || spans[i][0] == spans[j][0] && spans[i][1] > spans[j][1]
		})
	}
	return spans
}

func (d *detector) keep(spans [][]int, text []byte, lo, hi int, ok bool) [][]int {
	if !ok || d.check != nil && !d.check(text[lo:hi], text[:lo], text[hi:]) {
		return spans
	}
	return append(spans, []int{lo, hi})
}

// windows widens the candidate ranges cs to the whitespace around them
// (so that \b and the checks see what a scan of the whole text would)
// and merges those that touch, in order.
func windows(text []byte, cs [][2]int) [][2]int {
	if len(cs) == 0 {
		return nil
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i][0] < cs[j][0] })
	var out [][2]int
	for _, c := range cs {
		lo, hi := max(0, c[0]), min(len(text), max(c[1], 0))
		for lo > 0 && !isSpace(text[lo-1]) {
			lo--
		}
		for hi < len(text) && !isSpace(text[hi]) {
			hi++
		}
		if n := len(out); n > 0 && lo <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], hi)
			continue
		}
		out = append(out, [2]int{lo, hi})
	}
	return out
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// lits is a candidate scan: every place one of the literals is, from
// before bytes ahead of it to after bytes past it. Literals are found
// by their rarest byte (a digit or punctuation before a capital before
// a small letter), one IndexByte pass for all that share it: prose is
// full of the first bytes of "sk-" or "gho_", not of '_' or '-'.
func lits(before, after int, ls ...string) func([]byte) [][2]int {
	type lit struct {
		b   []byte
		off int // of the anchor byte in b
	}
	groups := map[byte][]lit{}
	var plain [][]byte
	for _, l := range ls {
		off := 0
		for i := range l {
			if rarity(l[i]) > rarity(l[off]) {
				off = i
			}
		}
		if rarity(l[off]) == 0 {
			plain = append(plain, []byte(l)) // no rare byte: bytes.Index
			continue
		}
		groups[l[off]] = append(groups[l[off]], lit{[]byte(l), off})
	}
	return func(text []byte) [][2]int {
		var out [][2]int
		for _, l := range plain {
			for at := 0; ; at += len(l) {
				i := bytes.Index(text[at:], l)
				if i < 0 {
					break
				}
				at += i
				out = append(out, [2]int{at - before, min(len(text), at+len(l)+after)})
			}
		}
		for c, g := range groups {
			for at := 0; ; at++ {
				i := bytes.IndexByte(text[at:], c)
				if i < 0 {
					break
				}
				at += i
				for _, l := range g {
					if st := at - l.off; st >= 0 && bytes.HasPrefix(text[st:], l.b) {
						out = append(out, [2]int{st - before, min(len(text), st+len(l.b)+after)})
					}
				}
			}
		}
		return out
	}
}

// rarity ranks a byte by how rare it is in prose.
func rarity(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return 0
	case c >= 'A' && c <= 'Z':
		return 1
	case c == ' ' || c == '.' || c == ',':
		return 0
	}
	return 2
}

// digitRuns is a candidate scan: the runs of at least n digits with at
// most two bytes of seps between each two, and two bytes around.
func digitRuns(n int, seps string) func([]byte) [][2]int {
	return func(text []byte) [][2]int {
		if countDigits(text) < n {
			return nil
		}
		var out [][2]int
		start, last, count, gap := 0, 0, 0, 0
		for i, c := range text {
			switch {
			case c-'0' < 10:
				if count == 0 {
					start = i
				}
				count, last, gap = count+1, i, 0
			case count == 0:
			case gap < 2 && strings.IndexByte(seps, c) >= 0:
				gap++
			default:
				if count >= n {
					out = append(out, [2]int{start - 2, last + 3})
				}
				count, gap = 0, 0
			}
		}
		if count >= n {
			out = append(out, [2]int{start - 2, last + 3})
		}
		return out
	}
}

// countDigits counts the ASCII digits of text.
func countDigits(text []byte) int {
	n := 0
	for _, c := range text {
		if c-'0' < 10 {
			n++
		}
	}
	return n
}

// union joins candidate scans.
func union(fs ...func([]byte) [][2]int) func([]byte) [][2]int {
	return func(text []byte) [][2]int {
		var out [][2]int
		for _, f := range fs {
			out = append(out, f(text)...)
		}
		return out
	}
}

// ibanStarts is the iban candidate scan: two capitals and two digits,
// and the 42 bytes an IBAN may take with its spaces.
func ibanStarts(text []byte) [][2]int {
	if countDigits(text) < 2 {
		return nil
	}
	var out [][2]int
	for i := 0; i+3 < len(text); i++ {
		if c := text[i]; c >= 'A' && c <= 'Z' && text[i+1] >= 'A' && text[i+1] <= 'Z' &&
			text[i+2] >= '0' && text[i+2] <= '9' && text[i+3] >= '0' && text[i+3] <= '9' {
			out = append(out, [2]int{i, i + 42})
		}
	}
	return out
}

// Detectors lists the built-in detectors' names.
func Detectors() []string {
	out := make([]string, 0, len(builtin))
	for k := range builtin {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var builtin = map[string]*detector{
	"email": {
		res:   []*regexp.Regexp{regexp.MustCompile(`[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b`)},
		check: func(m, pre, _ []byte) bool { return !endsWord(pre) },
		cands: lits(0, 0, "@"),
	},
	"phone": {
		res: []*regexp.Regexp{
			// International: +CC then groups.
			regexp.MustCompile(`\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){2,6}`),
			// North American: (415) 555-0100, 415-555-0100, 415.555.0100.
			regexp.MustCompile(`\(\d{3}\) ?\d{3}[-. ]\d{4}|\b\d{3}[-.]\d{3}[-.]\d{4}`),
		},
		check: phoneOK,
		cands: union(lits(0, 48, "+"), digitRuns(10, " ().-")),
	},
	"api_key": {
		res: []*regexp.Regexp{
			regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b`),
			regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}\b`),
			regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}|\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}\b`),
			regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`),
			regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`),
			regexp.MustCompile(`\b[Bb]earer\s+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)`),
			regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),
			regexp.MustCompile(`-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|\z)`),
		},
		cands: union(
			lits(2, 24, "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "k_live_", "k_test_", "xox", "AIza", "eyJ"),
			// Bearer: the blanks after it, then its token.
			lits(1, 8, "earer"),
			// A private key block: to its end, or the text's.
			lits(0, 1<<62, "-----BEGIN "),
		),
	},
	"card": {
		res: []*regexp.Regexp{
			regexp.MustCompile(`\b[2-6]\d{12,18}\b`),
			regexp.MustCompile(`\b[2-6]\d{3}[ -]\d{4}[ -]\d{4}[ -]\d{1,7}\b`),
			regexp.MustCompile(`\b3\d{3}[ -]\d{6}[ -]\d{5}\b`),
		},
		check: cardOK,
		cands: digitRuns(13, " -"),
	},
	"iban": {
		res:   []*regexp.Regexp{regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`)},
		check: ibanOK,
		cands: ibanStarts,
	},
}

// endsWord reports whether b ends with a letter, digit or one of ._%+-
// (a match starting there would be the tail of a longer token).
func endsWord(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	c := b[len(b)-1]
	return isAlnum(c) || bytes.IndexByte([]byte("._%+-"), c) >= 0
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func digits(m []byte) []byte {
	var d []byte
	for _, c := range m {
		if c >= '0' && c <= '9' {
			d = append(d, c)
		}
	}
	return d
}

// phoneOK: 8 to 15 digits (E.164) for an international number, not
// glued to other digits, dots or letters (a version number, a price).
func phoneOK(m, pre, post []byte) bool {
	if len(pre) > 0 {
		c := pre[len(pre)-1]
		if isAlnum(c) || c == '.' || c == '+' || c == '-' || c == '/' {
			return false
		}
	}
	if len(post) > 0 {
		c := post[0]
		if isAlnum(c) || c == '.' && len(post) > 1 && post[1] >= '0' && post[1] <= '9' || c == '-' || c == '/' {
			return false
		}
	}
	n := len(digits(m))
	if m[0] == '+' {
		return n >= 8 && n <= 15
	}
	return n == 10
}

// cardOK: 13 to 19 digits, one kind of separator, and the Luhn sum.
func cardOK(m, _, _ []byte) bool {
	if bytes.IndexByte(m, ' ') >= 0 && bytes.IndexByte(m, '-') >= 0 {
		return false
	}
	return luhn(digits(m))
}

// luhn reports whether the 13 to 19 digits d pass the Luhn check.
func luhn(d []byte) bool {
	if len(d) < 13 || len(d) > 19 {
		return false
	}
	sum := 0
	for i := range d {
		v := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// ibanOK: 15 to 34 characters without spaces, the mod-97 check.
func ibanOK(m, _, _ []byte) bool {
	s := bytes.ReplaceAll(m, []byte(" "), nil)
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	r := append(slices.Clone(s[4:]), s[:4]...)
	rem := 0
	for _, c := range r {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}
