package redact

import (
	"bytes"
	"regexp"
	"slices"
	"sort"
)

// detector finds spans of one kind of secret: its patterns' matches (the
// submatch named "s" when a pattern has one) that check accepts.
type detector struct {
	res []*regexp.Regexp
	// check accepts a match (nil: all); pre and post are the bytes
	// around it.
	check func(m, pre, post []byte) bool
	// hint: a text without any of these bytes has no match (nil: none).
	hint [][]byte
}

// find returns the detector's spans in text, ordered, without overlaps.
func (d *detector) find(text []byte) [][]int {
	if d.hint != nil && !slices.ContainsFunc(d.hint, func(h []byte) bool { return bytes.Contains(text, h) }) {
		return nil
	}
	var spans [][]int
	for _, re := range d.res {
		si := re.SubexpIndex("s")
		for _, m := range re.FindAllSubmatchIndex(text, -1) {
			lo, hi := m[0], m[1]
			if si > 0 && m[2*si] >= 0 {
				lo, hi = m[2*si], m[2*si+1]
			}
			if d.check != nil && !d.check(text[lo:hi], text[:lo], text[hi:]) {
				continue
			}
			spans = append(spans, []int{lo, hi})
		}
	}
	if len(d.res) > 1 {
		sort.Slice(spans, func(i, j int) bool {
			return spans[i][0] < spans[j][0] || spans[i][0] == spans[j][0] && spans[i][1] > spans[j][1]
		})
	}
	return spans
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
		hint:  [][]byte{[]byte("@")},
		check: func(m, pre, _ []byte) bool { return !endsWord(pre) },
	},
	"phone": {
		res: []*regexp.Regexp{
			// International: +CC then groups.
			regexp.MustCompile(`\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){2,6}`),
			// North American: (415) 555-0100, 415-555-0100, 415.555.0100.
			regexp.MustCompile(`\(\d{3}\) ?\d{3}[-. ]\d{4}|\b\d{3}[-.]\d{3}[-.]\d{4}`),
		},
		check: phoneOK,
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
	},
	"card": {
		res: []*regexp.Regexp{
			regexp.MustCompile(`\b[2-6]\d{12,18}\b`),
			regexp.MustCompile(`\b[2-6]\d{3}([ -])\d{4}[ -]\d{4}[ -]\d{1,7}\b`),
			regexp.MustCompile(`\b3\d{3}[ -]\d{6}[ -]\d{5}\b`),
		},
		check: cardOK,
	},
	"iban": {
		res:   []*regexp.Regexp{regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b`)},
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
