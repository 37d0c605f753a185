package memory

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// typicalFrontMatter is what most memories start with.
const typicalFrontMatter = "id: mem-000001\ntype: fact\ntags: [answers, issue]\nimportance: 0.94\ncreated: 2024-01-01T09:01:00Z\nuser: alice\n"

// Pieces the generator below combines: scalars yaml resolves to every
// type, or reads as something else than one plain scalar.
var (
	simpleKeys    = []string{"a", "user", "tags", "b_c", "d-e", "_x", "true", "null", "Null", "y", "on", "1a", "a b", "<<", "é", "~"}
	simpleScalars = []string{
		"alice", "true", "True", "yes", "no", "on", "off", "null", "~", "", "1", "-1", "+1", "0x1f", "0o17", "017", "1_000",
		"1e3", "1.5", ".5", "-.5", ".inf", "-.inf", "+.inf", ".nan", "0.", "-0", "0b101", "2024-01-01", "2024-01-01T09:01:00Z",
		"2024-01-01 09:01:00", "2024-1-1", "12:30", "1:2:3", "a:b", "http://x.y/z", "a, b", "it's", `say "hi"`, "a #b",
		"a#b", "#x", "- a", "-a", "-", "--", "---", "?a", "? a", ":a", "a:", "[a", "a]", "{a}", "&a", "*a", "!a", "!!str 1",
		"|", ">", "%a", "@a", "`a", "'q'", `"q"`, "a\tb", "é", "a\u0085b", "<<", "=", "(x)", "~x", "a  b", "Y", "FALSE",
		"a\rb", "[]", "[a, b]", "0.94", "-2.50", "00.5", "1.", "123456", "-42", "007", "9223372036854775807",
		"99999999999999999999", "2024-01-01T09:01:00.25Z", "2024-13-01T09:01:00Z", "2024-01-01T25:00:00Z",
		"2024-01-01T09:01:00+02:00", "2024-01-01t09:01:00z",
	}
	simpleSeps = []string{": ", ":", ":  ", " : ", ": \t"}
)

func genFrontMatter(t *rapid.T) string {
	// A tame document has keys that are strings and no odd lines, so
	// that a good part of the documents is taken by the simple path.
	tame := rapid.Bool().Draw(t, "tame")
	keys, seps, lines := simpleKeys, simpleSeps, 6
	if tame {
		keys, seps, lines = simpleKeys[:6], simpleSeps[:1], 2
	}
	var b strings.Builder
	for range rapid.IntRange(1, lines).Draw(t, "lines") {
		switch rapid.IntRange(0, 9).Draw(t, "shape") {
		case 0:
			if tame {
				break
			}
			b.WriteString(rapid.SampledFrom([]string{"", "  ", "# note", "  b: 1", "- x", "...", "\t"}).Draw(t, "odd"))
		default:
			b.WriteString(rapid.SampledFrom(keys).Draw(t, "key"))
			b.WriteString(rapid.SampledFrom(seps).Draw(t, "sep"))
			b.WriteString(genValue(t))
			b.WriteString(rapid.SampledFrom([]string{"", " ", "  "}).Draw(t, "trail"))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func genValue(t *rapid.T) string {
	scalar := func(label string) string {
		if rapid.Bool().Draw(t, label+"-random") {
			return rapid.StringOfN(rapid.SampledFrom([]rune("a1:-. ,#'\"[]{}~+_/eE")), 0, 6, -1).Draw(t, label)
		}
		return rapid.SampledFrom(simpleScalars).Draw(t, label)
	}
	if !rapid.Bool().Draw(t, "flow") {
		return scalar("scalar")
	}
	items := make([]string, rapid.IntRange(0, 4).Draw(t, "items"))
	for i := range items {
		items[i] = scalar("item")
	}
	sep := rapid.SampledFrom([]string{", ", ",", " , "}).Draw(t, "comma")
	return "[" + strings.Join(items, sep) + rapid.SampledFrom([]string{"", ",", " "}).Draw(t, "end") + "]"
}

// TestSimpleYAMLAgreesWithParser: whatever the simple path decodes, yaml's
// parser decodes to the same values, on documents built to sit on the
// edge of what a plain scalar is.
func TestSimpleYAMLAgreesWithParser(t *testing.T) {
	t.Parallel()
	taken, all := 0, 0
	check := func(t *rapid.T) {
		src := genFrontMatter(t)
		all++
		got, ok := simpleYAML([]byte(src))
		if !ok {
			return
		}
		taken++
		want, err := decodeNodes([]byte(src))
		if err != nil {
			t.Fatalf("%q: the simple path decodes it to %#v, yaml says %v", src, got, err)
		}
		if !sameValues(got, want) {
			t.Fatalf("%q: the simple path gives %#v, yaml %#v", src, got, want)
		}
	}
	for range 20 { // 20 × -rapid.checks (100): it is cheap, and the edges are many
		rapid.Check(t, check)
	}
	t.Logf("the simple path took %d of %d documents", taken, all)
	if taken*8 < all {
		t.Errorf("the simple path took %d of %d documents: the test checks little", taken, all)
	}
}

func TestSimpleYAMLTakesTypicalFrontMatter(t *testing.T) {
	t.Parallel()
	got, ok := simpleYAML([]byte(typicalFrontMatter))
	if !ok {
		t.Fatal("typical front matter goes through yaml's parser")
	}
	want, err := decodeNodes([]byte(typicalFrontMatter))
	if err != nil || !sameValues(got, want) {
		t.Fatalf("simple path %#v, parser %#v (%v)", got, want, err)
	}
	for _, src := range []string{"a: 'q'\n", "a: b # c\n", "a:\n  b: 1\n", "a: 1\na: 2\n", "true: 1\n", "a: [b, [c]]\n", "a: |\n  x\n"} {
		if _, ok := simpleYAML([]byte(src)); ok {
			t.Errorf("%q taken by the simple path", src)
		}
	}
}

// sameValues is reflect.DeepEqual, for which NaN is not NaN, or the same
// Go syntax (%#v: types and every digit).
func sameValues(a, b map[string]any) bool {
	return reflect.DeepEqual(a, b) || fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

func BenchmarkDecodeYAML(b *testing.B) {
	src := []byte(typicalFrontMatter)
	b.Run("simple", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeYAML(src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parser", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeNodes(src); err != nil {
				b.Fatal(err)
			}
		}
	})
}
