package memory

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, content string
		wantErr             string
		check               func(t *testing.T, m Meta)
	}{
		{name: "plain", file: "a.md", content: "just text\n"},
		{name: "front matter", file: "a.md",
			content: "---\nmemory_id: x1\ntype: fact\nusers: [alice, bob]\ntopic: cooking\nimportance_score: 0.25\ncreated: 2024-01-02T03:04:05Z\nrelated_files: [b.md]\nexpires: 2030-01-01\ncolor: red\n---\nbody\n",
			check: func(t *testing.T, m Meta) {
				if m.ID != "x1" || m.Type != "fact" || strings.Join(m.Users, ",") != "alice,bob" ||
					strings.Join(m.Tags, ",") != "cooking" || *m.Importance != 0.25 ||
					m.Created.Year() != 2024 || m.Related[0] != "b.md" || m.Expires.Year() != 2030 || m.Extra["color"] != "red" {
					t.Fatalf("%+v", m)
				}
			}},
		{name: "entities name users", file: "a.md", content: "---\nentities: [user:carol, project:x]\n---\n",
			check: func(t *testing.T, m Meta) {
				if strings.Join(m.Users, ",") != "carol" || len(m.Entities) != 2 {
					t.Fatalf("%+v", m)
				}
			}},
		{name: "unclosed", file: "a.md", content: "---\nuser: a\nbody", wantErr: "never closed"},
		{name: "bad yaml", file: "a.md", content: "---\nuser: [a\n---\n", wantErr: "not valid YAML"},
		{name: "importance range", file: "a.md", content: "---\nimportance: 3\n---\n", wantErr: "between 0 and 1"},
		{name: "bad date", file: "a.md", content: "---\ncreated: yesterday\n---\n", wantErr: "not a date"},
		{name: "json top", file: "a.json", content: `{"user":"dan","tags":["t"],"text":"x"}`,
			check: func(t *testing.T, m Meta) {
				if strings.Join(m.Users, ",") != "dan" || m.Tags[0] != "t" || m.Extra != nil {
					t.Fatalf("%+v", m)
				}
			}},
		{name: "json metadata", file: "a.json", content: `{"metadata":{"importance":0.9}}`,
			check: func(t *testing.T, m Meta) {
				if *m.Importance != 0.9 {
					t.Fatalf("%+v", m)
				}
			}},
		{name: "json broken", file: "a.json", content: `{"user":`, wantErr: "not valid JSON"},
		{name: "json user twice", file: "a.json", content: `{"user":"bob","user":"alice"}`, wantErr: "a user key appears twice"},
		{name: "jsonl ignored", file: "a.jsonl", content: "{bad\n"},
		{name: "dashes later", file: "a.md", content: "text\n---\nuser: x\n---\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Parse(c.file, []byte(c.content))
			switch {
			case c.wantErr == "" && p.Err != nil:
				t.Fatalf("unexpected error %v", p.Err)
			case c.wantErr != "" && (p.Err == nil || !strings.Contains(p.Err.Error(), c.wantErr)):
				t.Fatalf("error %v, want %q", p.Err, c.wantErr)
			}
			if c.check != nil {
				c.check(t, p.Meta)
			}
		})
	}
}

func TestBodyOffset(t *testing.T) {
	t.Parallel()
	c := "---\nuser: a\n---\nthe body"
	p := Parse("x.md", []byte(c))
	if c[p.BodyOffset:] != "the body" {
		t.Fatalf("body %q", c[p.BodyOffset:])
	}
}

func FuzzParse(f *testing.F) {
	f.Add("a.md", "---\nuser: a\n---\nbody")
	f.Add("a.json", `{"metadata":{"tags":"x,y"}}`)
	f.Add("a.md", "---\n: : :\n---\n")
	f.Fuzz(func(t *testing.T, name, content string) {
		p := Parse(name, []byte(content))
		if p.BodyOffset < 0 || p.BodyOffset > len(content) {
			t.Fatalf("body offset %d out of range", p.BodyOffset)
		}
		for _, l := range [][]string{p.Meta.Tags, p.Meta.Users, p.Meta.Entities, p.Meta.Related} {
			if len(l) > MaxValues {
				t.Fatalf("%d values kept", len(l))
			}
			for _, v := range l {
				if len(v) > MaxValueLen {
					t.Fatalf("a %d-byte value kept", len(v))
				}
			}
		}
	})
}

// TestJSONAndYAMLAgreeOnKeys: one key table serves both paths: every key
// and alias front matter knows, a JSON memory knows too (JSON "topics"
// was once ignored while YAML topics: worked).
func TestJSONAndYAMLAgreeOnKeys(t *testing.T) {
	t.Parallel()
	for _, k := range Keys {
		for _, name := range append([]string{k.Key}, k.Aliases...) {
			val := `"x"`
			if k.Kind == "number 0..1" {
				val = "0.5"
			} else if strings.Contains(k.Kind, "date") {
				val = `"2024-05-01"`
			}
			y := Parse("a.md", []byte("---\n"+name+": "+strings.Trim(val, `"`)+"\n---\nbody\n"))
			j := Parse("a.json", []byte(`{"`+name+`": `+val+`}`))
			if y.Err != nil || j.Err != nil {
				t.Fatalf("%s: %v / %v", name, y.Err, j.Err)
			}
			if !reflect.DeepEqual(y.Meta, j.Meta) || reflect.DeepEqual(j.Meta, Meta{}) {
				t.Errorf("%s: YAML gives %+v, JSON %+v", name, y.Meta, j.Meta)
			}
		}
	}
}

// TestFrontMatterWhereverItOpens: front matter after a byte order mark,
// or after blank lines, is read (whom a memory names must not depend on
// an invisible byte); text between two rules after blank lines is body;
// a block after blank lines that starts as keys but cannot be read is
// Unreadable (isolation fails closed); users under "metadata" count as in
// a JSON memory.
func TestFrontMatterWhereverItOpens(t *testing.T) {
	for _, c := range []struct {
		name, in   string
		users      []string
		unreadable bool
		body       string
	}{
		{"bom", "\xef\xbb\xbf---\nuser: bob\n---\nsecret\n", []string{"bob"}, false, "secret\n"},
		{"blank lines", "\n  \n---\nuser: bob\n---\nsecret\n", []string{"bob"}, false, "secret\n"},
		{"bom and blank", "\xef\xbb\xbf\r\n---\r\nusers: [bob, carol]\r\n---\r\nsecret\n", []string{"bob", "carol"}, false, "secret\n"},
		{"rules around text", "\n---\nSome text: with a colon here: and more\n---\n", nil, false, "\n---\nSome text: with a colon here: and more\n---\n"},
		{"rules around a sentence", "\n---\njust words\n---\n", nil, false, "\n---\njust words\n---\n"},
		{"rule never closed", "\n---\nuser: bob\n", nil, false, "\n---\nuser: bob\n"},
		{"late and broken", "\n---\nuser: [bob\n---\nsecret\n", nil, true, "secret\n"},
		{"metadata map", "---\nmetadata: {user: bob}\n---\nsecret\n", []string{"bob"}, false, "secret\n"},
	} {
		p := Parse("a.md", []byte(c.in))
		if !slices.Equal(p.Meta.Users, c.users) || p.Unreadable != c.unreadable || c.in[p.BodyOffset:] != c.body {
			t.Errorf("%s: users %q unreadable %v body %q (err %v), want %q %v %q", c.name, p.Meta.Users, p.Unreadable,
				c.in[p.BodyOffset:], p.Err, c.users, c.unreadable, c.body)
		}
		if large := ParseLarge("a.md", []byte(c.in)); c.users != nil && !large.Unreadable {
			t.Errorf("%s: over MaxParse, front matter is not reported unparsed", c.name)
		}
	}
}
