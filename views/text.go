package views

import (
	"bytes"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mnemofs/mnemofs/store"
)

// The text of a memory as search indexes it.

// indexText is what search sees of a memory: the words among its metadata
// values (tags, entities, names such as a speaker), its date in words, and
// its body. Keys, identifiers and numbers in the front matter are left out:
// they would match any query that mentions a number.
func indexText(in store.Info, text string) string {
	head, body := indexHead(in, metaText(in), text)
	return head + body
}

// indexHead is indexText in two: what comes before the body (its metadata
// words, meta as metaText made them, and date, ending with a line break)
// and the body, which is a part of text and not a copy.
func indexHead(in store.Info, meta, text string) (head, body string) {
	if in.BodyOffset <= 0 || in.BodyOffset > len(text) {
		return "", text
	}
	// The date in words, as questions put it ("in May 2023").
	return meta + in.Created.UTC().Format("2 January 2006\n"), text[in.BodyOffset:]
}

// metaText is the words among a memory's metadata values, one a line.
func metaText(in store.Info) string {
	var b strings.Builder
	add := func(v string) {
		if isWords(v) {
			b.WriteString(v)
			b.WriteByte('\n')
		}
	}
	for _, list := range [][]string{in.Tags, in.Users} {
		for _, v := range list {
			add(v)
		}
	}
	for _, v := range in.Entities {
		_, val, _ := strings.Cut(v, ":")
		add(val)
	}
	keys := make([]string, 0, len(in.Extra))
	for k := range in.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if s, ok := in.Extra[k].(string); ok {
			add(s)
		}
	}
	return b.String()
}

// isBinary reports content that is not text: a NUL byte, or invalid
// UTF-8, in its first 8 KiB.
func isBinary(b []byte) bool {
	b = b[:min(len(b), 8<<10)]
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 && len(b) >= utf8.UTFMax {
			return true // a cut rune at the very end is fine
		}
		b = b[n:]
	}
	return false
}

// isWords reports text made of letters and spaces only (no digits, no
// identifiers), at most a short phrase.
func isWords(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && r != ' ' && r != '-' && r != '\'' {
			return false
		}
	}
	return true
}
