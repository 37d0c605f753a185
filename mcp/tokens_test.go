package mcp

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	tokA = "alice-token-0123456789abcdef"
	tokB = "bob-token-0123456789abcdefgh"
	tokC = "carol-token-0123456789abcdef"
)

func tokensFile(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadTokens: lines, comments, options, and the principal and limits
// of each name; a token is found by its bearer alone.
func TestReadTokens(t *testing.T) {
	p := tokensFile(t, "# agents\n\nalice "+tokA+"\n  bob\t"+tokB+" read-only\ncarol "+tokC+" calls-per-second=2.5 concurrent-calls=1\n", 0o600)
	toks, err := NewTokens(func() ([]Token, error) { return ReadTokens(p, DefaultLimits) }, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(toks.Names(), ","); got != "alice,bob,carol" {
		t.Errorf("names %q", got)
	}
	for bearer, want := range map[string]string{tokA: "alice", tokB: "bob", tokC: "carol", tokA + "x": "", tokA[:len(tokA)-1]: "", "": ""} {
		if name, ok := toks.Lookup(bearer); name != want || ok != (want != "") {
			t.Errorf("Lookup(%q) = %q, %v; want %q", bearer, name, ok, want)
		}
	}
	a, _ := toks.Principal("alice")
	b, _ := toks.Principal("bob")
	c, _ := toks.Principal("carol")
	if a.User != "alice" || a.ReadOnly || a.Via != "http" || a.Limit.Limits() != DefaultLimits {
		t.Errorf("alice: %+v, limits %+v", a, a.Limit.Limits())
	}
	if !b.ReadOnly || !strings.Contains(b.ReadOnlyWhy, "token bob is read-only") {
		t.Errorf("bob: %+v", b)
	}
	if c.Limit.Limits() != (Limits{PerSecond: 2.5, Concurrent: 1}) {
		t.Errorf("carol's limits: %+v", c.Limit.Limits())
	}
	if _, ok := toks.Principal("dave"); ok {
		t.Errorf("a principal for a name with no token")
	}
	ro, err := NewTokens(func() ([]Token, error) { return ReadTokens(p, DefaultLimits) }, true)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := ro.Principal("alice"); !a.ReadOnly {
		t.Errorf("a read-only server's token may write")
	}
}

// TestTokensRefused: each file the server cannot take is refused with a
// message naming the file and the line, and no message shows a token.
func TestTokensRefused(t *testing.T) {
	for _, c := range []struct {
		body string
		mode os.FileMode
		want string
	}{
		{"alice " + tokA + "\n", 0o644, "is open to other users (mode 0644)"},
		{"alice " + tokA + "\n", 0o640, "chmod 600"},
		{"alice " + tokA + "\nalice " + tokB + "\n", 0o600, "line 2: the name alice is on an earlier line too"},
		{"alice " + tokA + "\nbob " + tokA + "\n", 0o600, "line 2: the token of bob is also alice's"},
		{"alice xq9zk\n", 0o600, "line 1: the token of alice is too short (5 bytes)"},
		{"a/b " + tokA + "\n", 0o600, `line 1: "a/b" is not a user name`},
		{"alice\n", 0o600, "line 1: a name and no token"},
		{"alice " + tokA + " " + tokB + "\n", 0o600, "line 1: field 1 after the token of alice is not read-only"},
		{"alice " + tokA + " readonly\n", 0o600, "is not read-only, calls-per-second=N or concurrent-calls=N"},
		{"alice " + tokA + " calls-per-second=-1\n", 0o600, "calls-per-second of alice must be a number from 0"},
		{"alice " + tokA + " concurrent-calls=x\n", 0o600, "concurrent-calls of alice must be a whole number"},
		{"alice " + tokA + "\x01\n", 0o600, "characters an HTTP header cannot carry"},
		{"# nothing\n", 0o600, "no tokens"},
	} {
		p := tokensFile(t, c.body, c.mode)
		_, err := NewTokens(func() ([]Token, error) { return ReadTokens(p, DefaultLimits) }, false)
		if err == nil {
			t.Errorf("%q (mode %o) was taken", c.body, c.mode)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v\nwant it to say %q", c.body, err, c.want)
		}
		for _, tok := range []string{tokA, tokB, "xq9zk"} {
			if strings.Contains(err.Error(), tok) {
				t.Errorf("%q: the message shows a token: %v", c.body, err)
			}
		}
	}
	if _, err := ReadTokens(filepath.Join(t.TempDir(), "missing"), DefaultLimits); err == nil || !strings.Contains(err.Error(), "cannot read the tokens file") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestTokensReload: a reload adds and withdraws names, keeps the limit
// state of a name whose limits did not change, and a file it cannot take
// leaves the tokens as they were.
func TestTokensReload(t *testing.T) {
	p := tokensFile(t, "alice "+tokA+"\nbob "+tokB+"\n", 0o600)
	toks, err := NewTokens(func() ([]Token, error) { return ReadTokens(p, DefaultLimits) }, false)
	if err != nil {
		t.Fatal(err)
	}
	a1, _ := toks.Principal("alice")
	if err := os.WriteFile(p, []byte("alice "+tokA+"\ncarol "+tokC+" read-only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	added, removed, err := toks.Reload()
	if err != nil || strings.Join(added, ",") != "carol" || strings.Join(removed, ",") != "bob" {
		t.Errorf("reload: added %v, removed %v, %v", added, removed, err)
	}
	if _, ok := toks.Lookup(tokB); ok {
		t.Errorf("bob's token is still taken")
	}
	if name, ok := toks.Lookup(tokC); !ok || name != "carol" {
		t.Errorf("carol's token: %q %v", name, ok)
	}
	if a2, _ := toks.Principal("alice"); a2.Limit != a1.Limit {
		t.Errorf("alice's limit state was not kept across a reload that left her limits alone")
	}
	if err := os.WriteFile(p, []byte("alice "+tokA+"\nalice "+tokB+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := toks.Reload(); err == nil {
		t.Errorf("a reload of a bad file succeeded")
	}
	if got := strings.Join(toks.Names(), ","); got != "alice,carol" {
		t.Errorf("after a failed reload the names are %q, want alice,carol", got)
	}
}

// TestLimit: over the rate a call is refused at once, and counted; over
// the calls at once it waits for a turn, and a waiter whose context ends
// does not run.
func TestLimit(t *testing.T) {
	l := NewLimit("carol", Limits{PerSecond: 3})
	ok, refused := 0, 0
	start := time.Now()
	for range 10 {
		if rel, err := l.Admit(context.Background()); err == nil {
			ok++
			rel()
		} else if refused++; !strings.Contains(err.Error(), "too many calls: token carol may make 3 calls a second") {
			t.Errorf("refusal: %v", err)
		}
	}
	// A second's worth at once, and 3 more for each second the loop took.
	if most := 3 + int(math.Ceil(time.Since(start).Seconds()*3)); ok < 3 || ok > most || refused != 10-ok {
		t.Errorf("%d of 10 calls at once admitted at 3 a second (%d refused), want 3 to %d", ok, refused, most)
	}

	c := NewLimit("dave", Limits{Concurrent: 2})
	r1, _ := c.Admit(context.Background())
	r2, _ := c.Admit(context.Background())
	got := make(chan error, 1)
	go func() {
		rel, err := c.Admit(context.Background())
		if err == nil {
			rel()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a third call ran while two did (%v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	r1()
	if err := <-got; err != nil {
		t.Errorf("the waiting call: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r3, _ := c.Admit(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if _, err := c.Admit(ctx); err == nil {
		t.Errorf("a cancelled waiter was admitted")
	}
	r2()
	r3()
}
