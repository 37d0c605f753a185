package mcp

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode"

	"github.com/mnemofs/mnemofs/store"
)

// The tokens file of `mnemofs mcp --http ADDR --tokens FILE`: one token a
// line, as NAME TOKEN [read-only] [calls-per-second=N] [concurrent-calls=N];
// blank lines and lines starting with '#' are skipped. NAME is the user
// whose sessions the token opens (isolation as a mount --user NAME has);
// the file must be private to its owner (mode 0600), like a key file, and
// no message ever shows a token.

// Token is one line of a tokens file.
type Token struct {
	Name     string
	ReadOnly bool
	Limits   Limits
	sum      [sha256.Size]byte // of the token: compared, never kept in clear
}

// Token lengths and what a tokens file may hold.
const (
	minToken   = 16
	maxToken   = 4096
	maxTokFile = 1 << 20
)

// ReadTokens reads the tokens file at path; def are the limits of a line
// that names none. It refuses a file others may read or that is not the
// caller's, and any line it cannot take (saying which, never the token).
func ReadTokens(path string, def Limits) ([]Token, error) {
	b, err := readPrivate(path, "tokens file", maxTokFile)
	if err != nil {
		return nil, err
	}
	var out []Token
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), maxTokFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t, err := parseTokenLine(line, def)
		if err != nil {
			return nil, fmt.Errorf("the tokens file %s, line %d: %v", path, n, err)
		}
		for _, o := range out {
			switch {
			case o.Name == t.Name:
				return nil, fmt.Errorf("the tokens file %s, line %d: the name %s is on an earlier line too: give each token its own name (the name is whom its sessions are for, in meta/mcp.log and in stats)", path, n, t.Name)
			case subtle.ConstantTimeCompare(o.sum[:], t.sum[:]) == 1:
				return nil, fmt.Errorf("the tokens file %s, line %d: the token of %s is also %s's: give each name its own token", path, n, t.Name, o.Name)
			}
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("the tokens file %s: %v", path, err)
	}
	return out, nil
}

// tokenUsage is the form of a line, for messages.
const tokenUsage = "a line is NAME TOKEN [read-only] [calls-per-second=N] [concurrent-calls=N]"

// parseTokenLine reads one line (messages never quote the token, nor a
// field that could be one).
func parseTokenLine(line string, def Limits) (Token, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return Token{}, fmt.Errorf("a name and no token: %s", tokenUsage)
	}
	t := Token{Name: f[0], Limits: def}
	switch {
	case !store.ValidName(t.Name) || strings.ContainsFunc(t.Name, unicode.IsControl):
		return Token{}, fmt.Errorf("%q is not a user name (one usable as a file name): %s", t.Name, tokenUsage)
	}
	if err := checkToken(f[1], "the token of "+t.Name); err != nil {
		return Token{}, err
	}
	t.sum = sha256.Sum256([]byte(f[1]))
	for i, o := range f[2:] {
		k, v, hasValue := strings.Cut(o, "=")
		var err error
		switch {
		case o == "read-only":
			t.ReadOnly = true
		case hasValue && k == "calls-per-second":
			t.Limits.PerSecond, err = strconv.ParseFloat(v, 64)
			if err != nil || t.Limits.PerSecond < 0 || t.Limits.PerSecond > 1e6 {
				return Token{}, fmt.Errorf("calls-per-second of %s must be a number from 0 (no limit) to 1000000, got %q", t.Name, v)
			}
		case hasValue && k == "concurrent-calls":
			t.Limits.Concurrent, err = strconv.Atoi(v)
			if err != nil || t.Limits.Concurrent < 0 || t.Limits.Concurrent > 1<<16 {
				return Token{}, fmt.Errorf("concurrent-calls of %s must be a whole number from 0 (no limit) to 65536, got %q", t.Name, v)
			}
		default:
			// Not shown: a token written one field too far is a token.
			return Token{}, fmt.Errorf("field %d after the token of %s is not read-only, calls-per-second=N or concurrent-calls=N (%s)", i+1, t.Name, tokenUsage)
		}
	}
	return t, nil
}

// checkToken checks a bearer token's form (what names it, for messages).
func checkToken(tok, what string) error {
	switch {
	case len(tok) < minToken:
		return fmt.Errorf("%s is too short (%d bytes): use at least %d random characters ('head -c 32 /dev/urandom | base64')", what, len(tok), minToken)
	case len(tok) > maxToken:
		return fmt.Errorf("%s is over %d bytes", what, maxToken)
	case strings.IndexFunc(tok, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0:
		return fmt.Errorf("%s holds spaces or characters an HTTP header cannot carry: use printable ASCII ('head -c 32 /dev/urandom | base64')", what)
	}
	return nil
}

// ReadTokenFile reads the one token of a --token-file (whose sessions are
// for user, "" for every user).
func ReadTokenFile(path, user string, def Limits) ([]Token, error) {
	b, err := readPrivate(path, "token file", maxToken)
	if err != nil {
		return nil, err
	}
	tok := string(bytes.TrimSpace(b))
	if err := checkToken(tok, "the token in "+path); err != nil {
		return nil, err
	}
	return []Token{{Name: user, Limits: def, sum: sha256.Sum256([]byte(tok))}}, nil
}

// readPrivate reads a file of secrets (what names its kind), refusing one
// that others may read or that belongs to another user (checked on the
// open file, as key files are), or that is over limit bytes.
func readPrivate(path, what string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the %s: %v", what, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read the %s: %v", what, err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch me := uint32(os.Geteuid()); {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("the %s %s is not a regular file", what, path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("the %s %s is open to other users (mode %04o): make it private with 'chmod 600 %s'", what, path, fi.Mode().Perm(), path)
	case st != nil && me != 0 && st.Uid != me:
		return nil, fmt.Errorf("the %s %s belongs to uid %d, not to you (uid %d): use a %s of your own", what, path, st.Uid, me, what)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the %s: %v", what, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("the %s %s is over %d bytes", what, path, limit)
	}
	return b, nil
}

// Tokens are the bearer tokens an HTTP server takes, each with the limit
// state of its name; Reload reads them again (on SIGHUP), keeping the
// state of names whose limits did not change.
type Tokens struct {
	read     func() ([]Token, error)
	readOnly bool // the server's --read-only: every token's sessions are

	// mu serialises reloads; cur is read without it.
	mu  sync.Mutex
	cur atomic.Pointer[tokenSet]
}

type tokenSet struct {
	tokens []Token
	limits map[string]*Limit
}

// NewTokens reads the tokens with read, refusing none at all; readOnly
// makes every session read-only.
func NewTokens(read func() ([]Token, error), readOnly bool) (*Tokens, error) {
	t := &Tokens{read: read, readOnly: readOnly}
	toks, err := read()
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("no tokens: %s", tokenUsage)
	}
	t.set(toks)
	return t, nil
}

// set makes toks the tokens, keeping the limit state of unchanged names.
func (t *Tokens) set(toks []Token) {
	old := t.cur.Load()
	ns := &tokenSet{tokens: toks, limits: map[string]*Limit{}}
	for _, k := range toks {
		if old != nil {
			if l := old.limits[k.Name]; l != nil && l.Limits() == k.Limits {
				ns.limits[k.Name] = l
				continue
			}
		}
		ns.limits[k.Name] = NewLimit(k.Name, k.Limits)
	}
	t.cur.Store(ns)
}

// Reload reads the tokens again. On an error the tokens stay as they
// were. It returns the names added and removed.
func (t *Tokens) Reload() (added, removed []string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	toks, err := t.read()
	if err != nil {
		return nil, nil, err
	}
	before := t.Names()
	t.set(toks)
	after := t.Names()
	for _, n := range after {
		if !slices.Contains(before, n) {
			added = append(added, n)
		}
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			removed = append(removed, n)
		}
	}
	return added, removed, nil
}

// Names lists the tokens' names, sorted.
func (t *Tokens) Names() []string {
	var out []string
	for _, k := range t.cur.Load().tokens {
		out = append(out, k.Name)
	}
	slices.Sort(out)
	return out
}

// Lookup returns the name of the token bearer. Every token is compared,
// as a SHA-256 in constant time, so that neither whether nor which token
// matched, nor how much of it, shows in the time taken.
func (t *Tokens) Lookup(bearer string) (name string, ok bool) {
	sum := sha256.Sum256([]byte(bearer))
	found := -1
	toks := t.cur.Load().tokens
	for i := range toks {
		if subtle.ConstantTimeCompare(sum[:], toks[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", false
	}
	return toks[found].Name, true
}

// Principal is whom the sessions of the token name are for now (ok false
// when the token is no longer there).
func (t *Tokens) Principal(name string) (Principal, bool) {
	cur := t.cur.Load()
	for _, k := range cur.tokens {
		if k.Name != name {
			continue
		}
		p := Principal{User: name, Via: "http", Limit: cur.limits[name]}
		switch {
		case k.ReadOnly:
			p.ReadOnly, p.ReadOnlyWhy = true, "the token "+name+" is read-only (the tokens file says so)"
		case t.readOnly:
			p.ReadOnly = true
		}
		return p, true
	}
	return Principal{}, false
}
