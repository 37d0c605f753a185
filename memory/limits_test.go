package memory

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// frontMatter is a memory whose front matter is the given YAML.
func frontMatter(yml string) []byte { return []byte("---\n" + yml + "---\nbody\n") }

func flowList(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s%d", prefix, i)
	}
	b.WriteString("]")
	return b.String()
}

func TestListsAreCapped(t *testing.T) {
	t.Parallel()
	p := Parse("a.md", frontMatter("tags: "+flowList("t", 20000)+"\nusers: "+flowList("u", 300)+
		"\nentities: "+flowList("user:e", 257)+"\nrelated: "+flowList("r", 256)+"\nother: "+flowList("x", 1000)+"\n"))
	if p.Err == nil {
		t.Fatal("no problem reported")
	}
	for _, want := range []string{
		"tags: 20000 values, only the first 256 are kept",
		"users: 557 values, only the first 256 are kept",
		"entities: 257 values, only the first 256 are kept",
		"other: 1000 values, only the first 256 are kept",
	} {
		if !strings.Contains(p.Err.Error(), want) {
			t.Errorf("problem %q lacks %q", p.Err, want)
		}
	}
	if strings.Contains(p.Err.Error(), "related") {
		t.Errorf("256 related values are within the limit: %q", p.Err)
	}
	m := p.Meta
	if len(m.Tags) != MaxValues || m.Tags[0] != "t0" || m.Tags[255] != "t255" {
		t.Fatalf("tags kept: %d, %q…%q", len(m.Tags), m.Tags[0], m.Tags[len(m.Tags)-1])
	}
	if len(m.Users) != MaxValues || len(m.Entities) != MaxValues || len(m.Related) != 256 || len(m.Extra["other"].([]any)) != MaxValues {
		t.Fatalf("users %d, entities %d, related %d, other %d", len(m.Users), len(m.Entities), len(m.Related), len(m.Extra["other"].([]any)))
	}
	// Duplicates count once; metadata within the limits has no problem.
	p = Parse("a.md", frontMatter("tags: ["+strings.Repeat("same, ", 1000)+"other]\n"))
	if p.Err != nil || strings.Join(p.Meta.Tags, ",") != "same,other" {
		t.Fatalf("duplicates: %v %q", p.Err, p.Meta.Tags)
	}
	// JSON lists are capped alike.
	p = Parse("a.json", []byte(`{"tags": `+jsonList(300)+`}`))
	if p.Err == nil || !strings.Contains(p.Err.Error(), "tags: 300 values, only the first 256 are kept") || len(p.Meta.Tags) != MaxValues {
		t.Fatalf("json: %v, %d tags", p.Err, len(p.Meta.Tags))
	}
}

func jsonList(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"j%d"`, i)
	}
	return b.String() + "]"
}

func TestLongValuesAreDropped(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxValueLen+1)
	ok := strings.Repeat("y", MaxValueLen)
	p := Parse("a.md", frontMatter("tags: ["+long+", "+ok+", short]\nuser: "+long+"\n"))
	if p.Err == nil || !strings.Contains(p.Err.Error(), "tags: 1 value longer than 255 bytes dropped") ||
		!strings.Contains(p.Err.Error(), "users: 1 value longer than 255 bytes dropped") {
		t.Fatalf("problem %v", p.Err)
	}
	if strings.Join(p.Meta.Tags, ",") != ok+",short" || len(p.Meta.Users) != 0 {
		t.Fatalf("tags %q users %q", p.Meta.Tags, p.Meta.Users)
	}
}

func TestOversizeIsReported(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("k: v\n", MaxParse/5+1)
	cases := []struct {
		name, content, want string
	}{
		{"a.md", "---\n" + big + "---\nbody", "front matter over 4194304 bytes not parsed"},
		{"a.md", "---\ntags: [x]\n---\n" + big, "file over 4194304 bytes: its front matter is not parsed"},
		{"a.json", `{"tags": ["x"], "text": "` + big + `"}`, "JSON over 4194304 bytes: its metadata is not parsed"},
		{"a.md", "plain text\n" + big, ""},
		{"a.jsonl", "---\n" + big + "---\n", ""},
	}
	for _, c := range cases {
		p := Parse(c.name, []byte(c.content))
		got := ""
		if p.Err != nil {
			got = p.Err.Error()
		}
		if got != c.want {
			t.Errorf("%s %.20q…: problem %q, want %q", c.name, c.content, got, c.want)
		}
		// The same from the first MaxParse bytes only (what views read).
		if u := Unparsed(c.name, []byte(c.content)[:MaxParse]); (u == nil) != (c.want == "") || u != nil && u.Error() != c.want {
			t.Errorf("Unparsed(%s) = %v, want %q", c.name, u, c.want)
		}
	}
}

// TestParseIsLinear parses 2 MiB of front matter of every costly shape.
// yaml.Unmarshal's duplicate key check is quadratic: 40,000 keys took
// 3.6 s, so 2 MiB of keys about two minutes (a 4 MiB block did not finish
// in 100 s). The bound is only a guard against that: the parse takes half
// a second (a few with the race detector).
func TestParseIsLinear(t *testing.T) {
	const size = 2 << 20
	var keys, nested, tags strings.Builder
	for i := 0; keys.Len() < size; i++ {
		fmt.Fprintf(&keys, "k%d: v\n", i)
	}
	nested.WriteString("x:\n")
	for i := 0; nested.Len() < size; i++ {
		fmt.Fprintf(&nested, "  k%d: v\n", i)
	}
	for i := 0; tags.Len() < size; i++ {
		fmt.Fprintf(&tags, "- t%d\n", i)
	}
	for name, yml := range map[string]string{"keys": keys.String(), "nested": nested.String(), "tags": "tags:\n" + tags.String()} {
		t0 := time.Now()
		p := Parse("a.md", frontMatter(yml))
		d := time.Since(t0)
		t.Logf("%s: %d bytes in %v (%v)", name, len(yml), d, p.Err)
		if d > 30*time.Second {
			t.Errorf("%s: %d bytes of front matter took %v", name, len(yml), d)
		}
	}
}

func TestAliases(t *testing.T) {
	t.Parallel()
	// An alias bomb: each level doubles; the budget stops it.
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x]\n")
	for i := 1; i < 40; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	t0 := time.Now()
	p := Parse("a.md", frontMatter(b.String()))
	if p.Err == nil || !strings.Contains(p.Err.Error(), "excessive aliasing") {
		t.Fatalf("alias bomb: %v", p.Err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("alias bomb took %v", d)
	}
	// Ordinary aliases and merge keys work as yaml.Unmarshal has them.
	p = Parse("a.md", frontMatter("base: &b {type: fact, tags: [x, y]}\nmine:\n  <<: *b\n  type: note\ntags: *t\n"))
	if p.Err == nil {
		t.Fatal("unknown anchor *t accepted")
	}
	p = Parse("a.md", frontMatter("base: &b {color: red, size: 2}\nmine:\n  <<: *b\n  size: 3\nuser: &u alice\nusers: [*u, bob]\n"))
	if p.Err != nil || strings.Join(p.Meta.Users, ",") != "alice,bob" ||
		!reflect.DeepEqual(p.Meta.Extra["mine"], map[string]any{"color": "red", "size": 3}) {
		t.Fatalf("%v %+v", p.Err, p.Meta)
	}
	// Duplicate keys are refused, as yaml.Unmarshal refuses them.
	p = Parse("a.md", frontMatter("user: a\ntags: [x]\nuser: b\n"))
	if p.Err == nil || !strings.Contains(p.Err.Error(), `line 3: mapping key "user" already defined at line 1`) {
		t.Fatalf("duplicate key: %v", p.Err)
	}
}

// TestDecodeLikeYAML checks decodeYAML against yaml.Unmarshal on the
// shapes front matter takes.
func TestDecodeLikeYAML(t *testing.T) {
	t.Parallel()
	for _, src := range yamlSeeds {
		compareYAML(t, src)
	}
}

var yamlSeeds = []string{
	"", "~", "a: 1\n", "user: alice\ntags: [a, b]\n", "a: {b: [1, 2.5, true, null, ~, '3']}\n",
	"created: 2024-05-01\n", "created: 2024-05-01T10:00:00Z\nt: !!timestamp 2024-05-01\n",
	"a:\nb: \n", "? a\n: b\n", "- a\n- b\n", "just text\n", "a: [\n", "a: *x\n",
	"x: &x {a: 1}\ny: *x\n", "<<: {a: 1}\nb: 2\n", "a: !!binary aGVsbG8=\n", "a: 0x1f\nb: 1e3\nc: .inf\n",
	"a: |\n  line\n  two\nb: >\n  folded\n  text\n", "'quoted key': \"esc\\tape\"\n", "a: 1\na: 2\n",
	"1: one\ntrue: yes\n", "a: !custom x\n", "~: x\nb: 1\n", "a: [*b]\n", "a: &b [*b]\n",
}

func compareYAML(t *testing.T, src string) {
	t.Helper()
	var want map[string]any
	werr := yaml.Unmarshal([]byte(src), &want)
	got, gerr := decodeYAML([]byte(src))
	if werr != nil || gerr != nil {
		if (werr == nil) != (gerr == nil) && !strings.Contains(fmt.Sprint(werr, gerr), "aliasing") {
			t.Errorf("%q: yaml says %v, decodeYAML says %v", src, werr, gerr)
		}
		return
	}
	if hasGeneralMap(want) {
		return // yaml makes map[any]any of those; here they are map[string]any
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q: yaml gives %#v, decodeYAML %#v", src, want, got)
	}
}

func hasGeneralMap(v any) bool {
	switch x := v.(type) {
	case map[any]any:
		return true
	case map[string]any:
		for _, e := range x {
			if hasGeneralMap(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasGeneralMap(e) {
				return true
			}
		}
	}
	return false
}

func FuzzDecodeYAML(f *testing.F) {
	for _, s := range yamlSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<16 {
			return
		}
		compareYAML(t, src)
	})
}
