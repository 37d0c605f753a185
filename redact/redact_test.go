package redact

import (
	"bytes"
	"strings"
	"testing"
)

func all(t testing.TB, mode Mode) *Redactor {
	var rules []Rule
	for _, d := range Detectors() {
		rules = append(rules, Rule{Detector: d, Mode: mode})
	}
	r, err := Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Secrets holds, per detector, values that must be found.
var Secrets = map[string][]string{
	"email": {"alice.smith+memo@example.com", "bob@mail.example.co.uk", "x_y@sub-domain.io"},
	"phone": {"+1 415 555 0100", "+44 20 7946 0958", "(415) 555-0100", "415-555-0100", "+41 44 668 18 00", "+491701234567"},
	"api_key": {
		"AKIAIOSFODNN7EXAMPLE",
		"ghp_" + strings.Repeat("a1B2", 9),
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
		"sk-proj-abcdefghijklmnopqrstuvwxyz0123",
		"sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
		"xoxb-123456789012-abcdefghijkl",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END RSA PRIVATE KEY-----",
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
	},
	"card": {"4111111111111111", "4111 1111 1111 1111", "5500-0000-0000-0004", "3782 822463 10005", "6011000990139424"},
	"iban": {"DE89370400440532013000", "DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432", "CH9300762011623852957"},
}

// Benign is text no detector may touch.
var Benign = []string{
	"version 1.2.3 and v10.20.30-rc1, go1.26.0",
	"on 2026-12-01 at 2026-12-01T10:11:12Z, or 2026-12-01T10:11:12.123456789+01:00",
	"sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"commit 47c188c and 47c188cd3a1f0e2b9c8d7e6f5a4b3c2d1e0f9a8b",
	"id 123e4567-e89b-12d3-a456-426614174000 and 41234567-1234-1234-1234-123456789012",
	"numbers 42, 1234567, 3.14159, 1e10, 1,234,567.89 and 100000",
	"prices $19.99, EUR 1.299,00, CHF 2000, 4111 apples",
	"timestamps 1733050000000 and 1764581234567890123",
	"ip 192.168.100.200 and port 8080, build 20261201.1",
	"ISBN 978-3-16-148410-0, zip 94103, code A1B2C3D4",
	"a path /home/alice/notes.md and a@b (not an address)",
	"Bearer of good news, [redacted:email] stays",
	"sk-short and AKIA-lower AKIAshort",
}

func TestDetectors(t *testing.T) {
	r := all(t, Index)
	for det, vals := range Secrets {
		for _, v := range vals {
			in := "before " + v + " after."
			out, counts := r.Redact("/semantic/a.md", []byte(in))
			if counts[det] != 1 || len(counts) != 1 {
				t.Errorf("%s: %q: counts %v, want one %s", det, v, counts, det)
			}
			want := "before [redacted:" + det + "] after."
			if det == "api_key" && strings.HasPrefix(v, "Bearer") {
				want = "before Bearer [redacted:api_key] after."
			}
			if string(out) != want {
				t.Errorf("%s: %q: got %q", det, v, out)
			}
		}
	}
	out, _ := r.Redact("/x", []byte("Authorization: Bearer abcdefghijklmnop0123456789=="))
	if string(out) != "Authorization: Bearer [redacted:api_key]" {
		t.Errorf("bearer: %q", out)
	}
}

func TestBenignStays(t *testing.T) {
	r := all(t, Index)
	for _, in := range Benign {
		if out, counts := r.Redact("/a", []byte(in)); counts != nil || string(out) != in {
			t.Errorf("%q: redacted to %q (%v)", in, out, counts)
		}
	}
}

func TestLuhnAndMod97(t *testing.T) {
	r := all(t, Index)
	for _, in := range []string{"4111111111111112", "4111 1111 1111 1112", "DE89370400440532013001", "4111 1111-1111 1111"} {
		if _, c := r.Redact("/a", []byte(in)); c["card"] != 0 || c["iban"] != 0 {
			t.Errorf("%q failed its check but was redacted: %v", in, c)
		}
	}
}

func TestRulesAndPaths(t *testing.T) {
	r, err := Compile([]Rule{
		{Detector: "email", Mode: Store, Paths: []string{"episodic/**"}},
		{Name: "ticket", Pattern: `TICKET-[0-9]{6}`, Mode: Index},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := []byte("mail a@example.com about TICKET-123456")
	if out, c := r.Redact("/semantic/x.md", in); string(out) != "mail a@example.com about [redacted:ticket]" || c["ticket"] != 1 {
		t.Errorf("semantic: %q %v", out, c)
	}
	if out, _ := r.Redact("/episodic/s/t.jsonl", in); string(out) != "mail [redacted:email] about [redacted:ticket]" {
		t.Errorf("episodic: %q", out)
	}
	if out, _ := r.ForStore().Redact("/episodic/x", in); string(out) != "mail [redacted:email] about TICKET-123456" {
		t.Errorf("store rules: %q", out)
	}
	if !r.ForStore().Applies("/archive/trash/episodic/x") || r.ForStore().Applies("/semantic/x") || !r.Applies("/semantic/x") {
		t.Error("Applies")
	}
	if r.ID() == "" || (*Redactor)(nil).ID() != "" || !(*Redactor)(nil).Empty() {
		t.Error("ID/Empty")
	}
	if out, c := (*Redactor)(nil).Redact("/a", in); c != nil || !bytes.Equal(out, in) {
		t.Error("nil redactor changed text")
	}
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		rules []Rule
		want  string
	}{
		{[]Rule{{Detector: "ssn", Mode: Index}}, "unknown detector"},
		{[]Rule{{Pattern: "x", Mode: Index}}, "needs a name"},
		{[]Rule{{Name: "x", Pattern: "(", Mode: Index}}, "bad pattern"},
		{[]Rule{{Name: "x", Pattern: "a*", Mode: Index}}, "empty string"},
		{[]Rule{{Name: "x", Pattern: strings.Repeat("a", MaxPattern+1), Mode: Index}}, "at most"},
		{[]Rule{{Detector: "email", Mode: "sometimes"}}, "not index or store"},
		{[]Rule{{Detector: "email", Mode: Index}, {Detector: "email", Mode: Store}}, "second rule"},
		{[]Rule{{Detector: "email", Name: "Bad Name", Mode: Index}}, "name"},
		{[]Rule{{Detector: "email", Mode: Index, Paths: []string{"["}}}, "path glob"},
		{[]Rule{{Detector: "email", Pattern: "x", Mode: Index}}, "not both"},
		{[]Rule{{Mode: Index}}, "needs a detector"},
		{make([]Rule, MaxRules+1), "at most"},
	} {
		if _, err := Compile(c.rules); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.rules, err, c.want)
		}
	}
}

func TestStable(t *testing.T) {
	r, _ := Compile([]Rule{{Detector: "email", Mode: Index}, {Name: "word", Pattern: `redacted|email`, Mode: Index}})
	once, _ := r.Redact("/a", []byte("a@example.com and email"))
	twice, c := r.Redact("/a", once)
	if !bytes.Equal(once, twice) || c != nil {
		t.Errorf("not stable: %q then %q (%v)", once, twice, c)
	}
}

func FuzzRedact(f *testing.F) {
	for _, vs := range Secrets {
		for _, v := range vs {
			f.Add("x " + v + " y")
		}
	}
	for _, b := range Benign {
		f.Add(b)
	}
	r := all(f, Store)
	f.Fuzz(func(t *testing.T, in string) {
		once, _ := r.Redact("/a", []byte(in))
		twice, c := r.Redact("/a", once)
		if !bytes.Equal(once, twice) || c != nil {
			t.Fatalf("redacting twice changed %q to %q (%v)", once, twice, c)
		}
		// No detector, scanning the whole text (not only the windows
		// its candidate scan gives), finds anything in the output outside
		// the markers.
		for name, d := range builtin {
			marks := markerRE.FindAllIndex(once, -1)
			bare := &detector{res: d.res, check: d.check}
			for _, s := range bare.find(once) {
				if !overlaps(s, marks) {
					t.Fatalf("%s still finds %q in %q", name, once[s[0]:s[1]], once)
				}
			}
		}
	})
}

// BenchmarkRedact is every detector over 1 KiB of prose, without and
// with secrets in it.
func BenchmarkRedact(b *testing.B) {
	words := strings.Repeat("the agent noted that the user prefers short answers about travel plans and budgets ", 13)[:1024]
	secret := "mail bob@example.com key AKIAQWERTYUIOPASDFGH call +41 44 668 18 00 "
	r := all(b, Index)
	for name, text := range map[string]string{"clean": words, "secrets": secret + words[len(secret):]} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				r.Redact("/a", []byte(text))
			}
		})
	}
}

// TestGluedToMarkers: a secret right after (or before) a marker is masked
// like any other (a store-mode file appended to with no separator), and
// secrets glued to each other are all masked, in one call.
func TestGluedToMarkers(t *testing.T) {
	r := all(t, Store)
	for _, in := range []string{
		"[redacted:email]bob@example.com",
		"bob@example.com[redacted:phone]",
		"[redacted:phone]+4915112345678",
		"+00000000+00000000",
		"+4915112345678+4915112345679+4915112345670+4915112345671+4915112345672+4915112345673+4915112345674+4915112345675+4915112345676+4915112345677",
	} {
		out, _ := r.Redact("/a", []byte(in))
		for _, secret := range []string{"bob@example.com", "4915112345", "+00000000"} {
			if strings.Contains(string(out), secret) {
				t.Errorf("%q → %q: %q is still there", in, out, secret)
			}
		}
		if again, c := r.Redact("/a", out); string(again) != string(out) || c != nil {
			t.Errorf("%q → %q → %q: not stable", in, out, again)
		}
	}
}
