package memory

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseLine(t *testing.T) {
	t.Parallel()
	day := func(s string) time.Time {
		tm, err := ParseTime(s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		name, line string
		users      string
		speaker    string
		created    string // RFC 3339, "" for none
		tags, body string
		extra      string // sorted keys
	}{
		{name: "turn", line: `{"user":"26","speaker":"Caroline","dia_id":"D1:3","created":"2023-05-08T13:56:00Z","text":"I went to a support group."}`,
			users: "26", speaker: "Caroline", created: "2023-05-08T13:56:00Z", body: "I went to a support group.", extra: "dia_id"},
		{name: "chat message", line: `{"role":"user","content":[{"type":"text","text":"hello"},{"type":"image"},{"type":"text","text":"there"}],"timestamp":1714557600}`,
			speaker: "user", created: "2024-05-01T10:00:00Z", body: "hello\nthere"},
		{name: "millis and users list", line: `{"users":["alice","bob","alice"],"name":"Al","message":"hi","ts":1714557600000}`,
			users: "alice,bob", speaker: "Al", created: "2024-05-01T10:00:00Z", body: "hi"},
		{name: "speaker over role", line: `{"speaker":"Ann","role":"assistant","text":"x"}`,
			speaker: "Ann", body: "x", extra: "role"},
		{name: "tags string", line: `{"tags":"a, b","Text":"y"}`, tags: "a,b", body: "y"},
		{name: "bad date kept as extra", line: `{"date":"last tuesday","text":"z"}`, body: "z", extra: "date"},
		{name: "no body key", line: `{"user":"u","n":1}`, users: "u", extra: "n"},
		{name: "not json", line: `plain words`, body: "plain words"},
		{name: "broken json", line: `{"user":`, body: `{"user":`},
		{name: "log entry", line: `2024-05-01T10:00:00Z deploy finished`, created: "2024-05-01T10:00:00Z", body: "deploy finished"},
		{name: "log entry space", line: `2024-05-01 10:00:00 INFO ok`, created: "2024-05-01T10:00:00Z", body: "INFO ok"},
		{name: "log entry bracket", line: `[2024-05-01 10:00] started`, created: "2024-05-01T10:00:00Z", body: "started"},
		{name: "log date only", line: `2024-05-01: notes`, created: "2024-05-01T00:00:00Z", body: "notes"},
		{name: "number start", line: `42 apples`, body: "42 apples"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := ParseLine([]byte(c.line))
			got := func(what, have, want string) {
				if have != want {
					t.Errorf("%s: got %q, want %q (%+v)", what, have, want, l)
				}
			}
			got("users", strings.Join(l.Users, ","), c.users)
			got("speaker", l.Speaker, c.speaker)
			got("tags", strings.Join(l.Tags, ","), c.tags)
			got("body", l.Body, c.body)
			var keys []string
			for k := range l.Extra {
				keys = append(keys, k)
			}
			got("extra", strings.Join(sorted(keys), ","), c.extra)
			switch {
			case c.created == "" && l.Created != nil:
				t.Errorf("created %v, want none", l.Created)
			case c.created != "" && (l.Created == nil || !l.Created.Equal(day(c.created))):
				t.Errorf("created %v, want %s", l.Created, c.created)
			}
		})
	}
}

func sorted(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestParseLineLimits(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"tags":[`)
	for i := range 400 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"t` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `"`)
	}
	b.WriteString(`],"speaker":"` + strings.Repeat("s", 300) + `","text":"ok"}`)
	l := ParseLine([]byte(b.String()))
	if len(l.Tags) > MaxValues || l.Speaker != "" || l.Body != "ok" {
		t.Fatalf("tags %d, speaker %q, body %q", len(l.Tags), l.Speaker, l.Body)
	}
	long := `{"text":"` + strings.Repeat("y", MaxLine) + `"}`
	if l := ParseLine([]byte(long)); l.JSON || l.Body != long {
		t.Fatalf("a line over MaxLine is all body")
	}
}

// FuzzParseLine: ParseLine never panics, keeps its limits, and a body it
// returns is part of the input or built from its JSON strings.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"user":"a","speaker":"b","created":"2024-01-02","tags":["x"],"text":"hi"}`,
		`{"content":[{"type":"text","text":"a"}],"role":"user","timestamp":1700000000}`,
		`2024-05-01 10:00:00 INFO x`, `[2024-05-01T10:00:00Z] y`, `{`, ``, `{"users":[1,null,{"a":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l := ParseLine(line)
		if len(l.Users) > MaxValues || len(l.Tags) > MaxValues {
			t.Fatalf("%d users, %d tags", len(l.Users), len(l.Tags))
		}
		for _, v := range append(append([]string{}, l.Users...), l.Tags...) {
			if len(v) > MaxValueLen || v == "" {
				t.Fatalf("value %q", v)
			}
		}
		if len(l.Speaker) > MaxValueLen {
			t.Fatalf("speaker of %d bytes", len(l.Speaker))
		}
		if !l.JSON && !strings.Contains(string(line), l.Body) {
			t.Fatalf("body %q not in %q", l.Body, line)
		}
		if l.JSON && !utf8.ValidString(l.Body) {
			t.Fatalf("body not UTF-8: %q", l.Body)
		}
	})
}

// TestLineUnsure: a line of a JSON log whose users cannot be told —
// not a JSON object (a piece of one written over several lines), cut
// off, a user key twice or in two spellings, users at the top and
// other users under "metadata" — is Unsure; users under "metadata"
// alone count.
func TestLineUnsure(t *testing.T) {
	for _, c := range []struct {
		line    string
		jsonLog bool
		unsure  bool
		users   []string
	}{
		{`{"user":"bob","text":"x"}`, true, false, []string{"bob"}},
		{`{"text":"public"}`, true, false, nil},
		{`  "user": "bob",`, true, true, nil},
		{`  "text": "pretty printed secret"`, true, true, nil},
		{`}`, true, true, nil},
		{`plain text entry`, false, false, nil},
		{`{"user":"bob","text":"cut`, true, true, nil},
		{`{"user":"bob","text":"cut`, false, true, nil},
		{`{"user":"bob","user":"alice","text":"x"}`, true, true, []string{"alice"}},
		{`{"User":"bob","user":"alice","text":"x"}`, true, true, nil},
		{`{"users":["a"],"user":"a","text":"x"}`, true, false, []string{"a"}},
		{`{"metadata":{"user":"bob"},"text":"x"}`, true, false, []string{"bob"}},
		{`{"user":"alice","metadata":{"user":"bob"},"text":"x"}`, true, true, nil},
		{`{"user":"bob","metadata":{"users":["bob"]},"text":"x"}`, true, false, []string{"bob"}},
		{`["an","array"]`, true, true, nil},
		{`{"entities":["user:bob","project:x"],"text":"x"}`, true, false, []string{"bob"}},
		{`{"entities":"User:bob","text":"x"}`, true, false, []string{"bob"}},
		{`{"metadata":{"entities":["user:bob"]},"text":"x"}`, true, false, []string{"bob"}},
		{`{"user":"alice","metadata":{"entities":["user:bob"]},"text":"x"}`, true, true, nil},
	} {
		l := ParseLine([]byte(c.line))
		if l.Unsure(c.jsonLog) != c.unsure {
			t.Errorf("%s (json log %v): unsure %v, want %v", c.line, c.jsonLog, l.Unsure(c.jsonLog), c.unsure)
		}
		if !c.unsure && !slices.Equal(l.Users, c.users) {
			t.Errorf("%s: users %q, want %q", c.line, l.Users, c.users)
		}
	}
}
