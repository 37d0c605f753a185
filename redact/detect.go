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
	res []pat
	// check accepts a match (nil: all); pre and post are the bytes
	// around it.
	check func(m, pre, post []byte) bool
}

// pat is one pattern and a cheap test that a text may hold a match (nil:
// always run it): most texts hold no secret, and a byte scan is far
// cheaper than the regexp engine.
type pat struct {
	re  *regexp.Regexp
	may func([]byte) bool
}

// find returns the detector's spans in text, ordered, without overlaps.
func (d *detector) find(text []byte) [][]int {
	var spans [][]int
	for _, p := range d.res {
		if p.may != nil && !p.may(text) {
			continue
		}
		if si := p.re.SubexpIndex("s"); si > 0 {
			for _, m := range p.re.FindAllSubmatchIndex(text, -1) {
				spans = d.keep(spans, text, m[2*si], m[2*si+1])
			}
			continue
		}
		for _, m := range p.re.FindAllIndex(text, -1) {
			spans = d.keep(spans, text, m[0], m[1])
		}
	}
	if len(d.res) > 1 {
		sort.Slice(spans, func(i, j int) bool {
			return spans[i][0] < spans[j][0] || spans[i][0] == spans[j][0] && spans[i][1] > spans[j][1]
		})
	}
	return spans
}

func (d *detector) keep(spans [][]int, text []byte, lo, hi int) [][]int {
	if lo < 0 || d.check != nil && !d.check(text[lo:hi], text[:lo], text[hi:]) {
		return spans
	}
	return append(spans, []int{lo, hi})
}

// any is a pattern's test: text holds one of the literals.
func any(lits ...string) func([]byte) bool {
	bs := make([][]byte, len(lits))
	for i, l := range lits {
		bs[i] = []byte(l)
	}
	return func(text []byte) bool {
		return slices.ContainsFunc(bs, func(l []byte) bool { return bytes.Contains(text, l) })
	}
}

// digitRun is a pattern's test: text holds n digits with at most two
// bytes of seps between each two.
func digitRun(n int, seps string) func([]byte) bool {
	return func(text []byte) bool {
		run, gap := 0, 0
		for _, c := range text {
			switch {
			case c >= '0' && c <= '9':
				if run++; run >= n {
					return true
				}
				gap = 0
			case gap < 2 && run > 0 && strings.IndexByte(seps, c) >= 0:
				gap++
			default:
				run, gap = 0, 0
			}
		}
		return false
	}
}

// ibanStart is the iban pattern's test: two capitals and two digits.
func ibanStart(text []byte) bool {
	for i := 0; i+3 < len(text); i++ {
		if c := text[i]; c >= 'A' && c <= 'Z' && text[i+1] >= 'A' && text[i+1] <= 'Z' &&
			text[i+2] >= '0' && text[i+2] <= '9' && text[i+3] >= '0' && text[i+3] <= '9' {
			return true
		}
	}
	return false
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
		res:   []pat{{regexp.MustCompile(`[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b`), any("@")}},
		check: func(m, pre, _ []byte) bool { return !endsWord(pre) },
	},
	"phone": {
		res: []pat{
			// International: +CC then groups.
			{regexp.MustCompile(`\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){2,6}`), any("+")},
			// North American: (415) 555-0100, 415-555-0100, 415.555.0100.
			{regexp.MustCompile(`\(\d{3}\) ?\d{3}[-. ]\d{4}|\b\d{3}[-.]\d{3}[-.]\d{4}`), digitRun(10, " ().-")},
		},
		check: phoneOK,
	},
	"api_key": {
		res: []pat{
			{regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b`), any("AKIA", "ASIA", "AGPA", "AIDA", "AROA")},
			{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}\b`), any("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")},
			{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}|\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}\b`), any("sk-", "k_live_", "k_test_")},
			{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), any("xox")},
			{regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`), any("AIza")},
			{regexp.MustCompile(`\b[Bb]earer\s+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)`), any("earer")},
			{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), any("eyJ")},
			{regexp.MustCompile(`-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|\z)`), any("-----BEGIN ")},
		},
	},
	"card": {
		res: []pat{
			{regexp.MustCompile(`\b[2-6]\d{12,18}\b`), digitRun(13, "")},
			{regexp.MustCompile(`\b[2-6]\d{3}[ -]\d{4}[ -]\d{4}[ -]\d{1,7}\b`), digitRun(13, " -")},
			{regexp.MustCompile(`\b3\d{3}[ -]\d{6}[ -]\d{5}\b`), digitRun(15, " -")},
		},
		check: cardOK,
	},
	"iban": {
		res:   []pat{{regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`), ibanStart}},
		check: ibanOK,
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
