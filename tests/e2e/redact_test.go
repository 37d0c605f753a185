package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The redaction tests: every detector and a custom pattern, in each mode,
// through a real mount (redact_test.go) and through MCP
// (redact_mcp_test.go).

// redactCase is one rule's memory: a file holding the secret among words
// found by search (word), and the query that spells the secret.
type redactCase struct {
	rule, file, word, secret string
}

var redactCases = []redactCase{
	{"email", "semantic/email.md", "gondola", "zanzibar.quokka@kumquatmail.org"},
	{"phone", "semantic/phone.md", "xylophone", "+41 44 668 18 00"},
	{"api_key", "semantic/keys.md", "trombone", "AKIAQWERTYUIOPASDFGH"},
	{"api_key", "semantic/gh.md", "euphonium", "ghp_" + strings.Repeat("Zq9x", 9)},
	{"card", "semantic/card.md", "marimba", "4111 1111 1111 1111"},
	{"iban", "semantic/iban.md", "bagpipe", "CH93 0076 2011 6238 5295 7"},
	{"ticket", "semantic/ticket.md", "ocarina", "TKT-583920"},
}

// redactBenign is the false-positive corpus: nothing in it is redacted.
const redactBenign = `harmonica notes
version 1.2.3 and v10.20.30-rc1, go1.26.0
on 2026-12-01 at 2026-12-01T10:11:12Z and 2026-12-01T10:11:12.123+01:00
sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
commit 47c188c and 47c188cd3a1f0e2b9c8d7e6f5a4b3c2d1e0f9a8b
uuid 123e4567-e89b-12d3-a456-426614174000
numbers 42, 1234567, 3.14159, 1,234,567.89, 1733050000000
prices $19.99, EUR 1.299,00, CHF 2000
`

// redactPolicy is a policy with every detector and the ticket pattern in
// mode.
func redactPolicy(t *testing.T, mode string) string {
	var b strings.Builder
	b.WriteString("redact:\n")
	for _, d := range []string{"email", "phone", "api_key", "card", "iban"} {
		b.WriteString("  - {detector: " + d + ", mode: " + mode + "}\n")
	}
	b.WriteString("  - {name: ticket, pattern: 'TKT-[0-9]{6}', mode: " + mode + "}\n")
	f := filepath.Join(t.TempDir(), "policy.yaml")
	check(t, os.WriteFile(f, []byte(b.String()), 0o600))
	return f
}

// secretWords is the secret as a query: its letters and digits.
func secretWords(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}), " ")
}

// noSecret fails when text holds one of the cases' secrets.
func noSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, c := range redactCases {
		if strings.Contains(text, c.secret) {
			t.Errorf("%s shows the %s secret %q:\n%s", what, c.rule, c.secret, clipText(text))
		}
	}
}

// grepData runs grep -r on the data dir for every secret and returns what
// it found. Not -a: Badger preallocates its value log as a sparse 2 GiB
// file, which grep -a reads in full (tens of seconds, and past the mount
// watchdog on a loaded CI machine); a file grep takes for binary is still
// searched, and listed by -l, with its holes skipped.
func grepData(t *testing.T, data string) string {
	t.Helper()
	args := []string{"-rlF", "-D", "skip"}
	for _, c := range redactCases {
		args = append(args, "-e", c.secret)
	}
	where := data
	if onEtcd() {
		// The store is in etcd: grep everything etcd holds of it.
		where = filepath.Join(t.TempDir(), "etcd-values")
		check(t, os.WriteFile(where, etcdDump(t, data), 0o600))
	}
	out, err := exec.Command("grep", append(args, where)...).Output()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("grep: %v", err)
	}
	return string(out)
}

func readText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	check(t, err)
	return string(b)
}

// TestRedactionMount: for each detector and mode, through a mount: the
// memory is found by its other words; search, .results, a log line's
// result, context/, mnemofs search, meta/errors, history/ (store mode)
// and the logs never show the secret; the secret's own words find
// nothing; the false-positive corpus stays; meta/stats.json counts; in
// store mode the file and grep -r of the data dir show no secret.
func TestRedactionMount(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"index", "store"} {
		t.Run(mode, func(t *testing.T) { redactionMount(t, mode) })
	}
}

func redactionMount(t *testing.T, mode string) {
	data, mnt := t.TempDir(), t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	check(t, os.WriteFile(bad, []byte("redact:\n  - {name: x, pattern: 'TKT-[0-9', mode: "+mode+"}\n"), 0o600))
	makeStore(t, data)
	oneErrorLine(t, runMnemofs(t, "policy", "set", "--data", data, bad), "redact[0] (x): bad pattern")
	mustRun(t, "policy", "set", "--data", data, redactPolicy(t, mode))
	m := startMount(t, data, mnt)
	// Through the mount, an invalid rule is refused (EINVAL), the old
	// policy kept.
	if err := os.WriteFile(filepath.Join(mnt, "meta/policy.yaml"), []byte("redact:\n  - {detector: ssn, mode: index}\n"), 0o644); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("an unknown detector through meta/policy.yaml: %v, want EINVAL", err)
	}
	for _, c := range redactCases {
		check(t, os.WriteFile(filepath.Join(mnt, c.file), []byte("The "+c.word+" memo: "+c.secret+" is what it says.\n"), 0o644))
	}
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/benign.md"), []byte(redactBenign), 0o644))
	// A large file (a blob, and written by the kernel through passthrough
	// where no rule covers it).
	large := strings.Repeat("filler line of a long clavichord note\n", 3000) + "the end: " + redactCases[2].secret + "\n"
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/large.md"), []byte(large), 0o644))
	// A log, appended to line by line, as echo >> does.
	sess := filepath.Join(mnt, "episodic/sessions/s1")
	check(t, os.MkdirAll(sess, 0o755))
	for _, l := range []string{
		`{"user":"alice","speaker":"alice","text":"hello there"}`,
		`{"user":"alice","speaker":"alice","text":"call the accordion shop at ` + redactCases[1].secret + ` or mail ` + redactCases[0].secret + `"}`,
		`{"user":"alice","speaker":"bot","text":"noted, thanks"}`,
	} {
		f, err := os.OpenFile(filepath.Join(sess, "turns.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		check(t, err)
		_, err = f.WriteString(l + "\n")
		check(t, err)
		check(t, f.Close())
	}
	// An import (the bulk path: no open, write and close).
	src := t.TempDir()
	check(t, os.WriteFile(filepath.Join(src, "imported.md"), []byte("The imported celesta memo: "+redactCases[2].secret+"\n"), 0o644))
	mustRun(t, "import", src, "--to", "/semantic/imp", "--data", data)
	if got := readText(t, filepath.Join(mnt, "semantic/imp/imported.md")); mode == "store" && got != "The imported celesta memo: [redacted:api_key]\n" {
		t.Errorf("store mode: the imported file reads %q", got)
	}
	if res := readText(t, filepath.Join(mnt, "search/celesta/.results")); !strings.Contains(res, "imported.md") || !strings.Contains(res, "[redacted:api_key]") {
		t.Errorf("search celesta:\n%s", res)
	}
	// Broken front matter whose message might quote the text.
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/broken.md"), []byte("---\ntags: [a, "+redactCases[0].secret+"\n---\nbody\n"), 0o644))

	for _, c := range redactCases {
		got := readText(t, filepath.Join(mnt, c.file))
		marker := "[redacted:" + c.rule + "]"
		if mode == "store" && (strings.Contains(got, c.secret) || !strings.Contains(got, marker)) {
			t.Errorf("store mode: %s reads %q", c.file, got)
		}
		if mode == "index" && !strings.Contains(got, c.secret) {
			t.Errorf("index mode: %s reads %q, not the bytes written", c.file, got)
		}
		res := readText(t, filepath.Join(mnt, "search", c.word, ".results"))
		if !strings.Contains(res, "/"+c.file) || !strings.Contains(res, marker) {
			t.Errorf("search %s: %s is not found with its marker:\n%s", c.word, c.file, res)
		}
		noSecret(t, "search/"+c.word+"/.results", res)
		ctx := readText(t, filepath.Join(mnt, "context", c.word))
		if !strings.Contains(ctx, marker) {
			t.Errorf("context/%s has no marker:\n%s", c.word, ctx)
		}
		noSecret(t, "context/"+c.word, ctx)
		q := secretWords(c.secret)
		res = readText(t, filepath.Join(mnt, "search", q, ".results"))
		if strings.Contains(res, "/"+c.file) {
			t.Errorf("searching for the secret %q finds %s:\n%s", q, c.file, res)
		}
		// The header echoes the query, the reader's own words: the rest
		// must not show them.
		_, rest, _ := strings.Cut(res, "\n")
		noSecret(t, "search/"+q+"/.results", rest)
		cli := mustRun(t, "search", "--data", data, "--json", c.word)
		if !strings.Contains(cli.stdout, marker) {
			t.Errorf("mnemofs search %s: no marker:\n%s", c.word, cli.stdout)
		}
		noSecret(t, "mnemofs search", cli.stdout+cli.stderr)
	}
	if got := readText(t, filepath.Join(mnt, "semantic/benign.md")); got != redactBenign {
		t.Errorf("the benign corpus changed:\n%s", got)
	}
	if res := readText(t, filepath.Join(mnt, "search/harmonica/.results")); strings.Contains(res, "[redacted") || !strings.Contains(res, "benign.md") {
		t.Errorf("benign corpus search:\n%s", res)
	}
	if got := readText(t, filepath.Join(mnt, "semantic/large.md")); mode == "store" && (strings.Contains(got, redactCases[2].secret) || !strings.HasSuffix(got, "the end: [redacted:api_key]\n")) {
		t.Errorf("store mode: the large file ends %q", got[len(got)-60:])
	}
	// A log line's result entry and its context.
	ents, err := os.ReadDir(filepath.Join(mnt, "search/accordion"))
	check(t, err)
	line := ""
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), "turns.jsonl#L2") {
			line = readText(t, filepath.Join(mnt, "search/accordion", e.Name()))
		}
	}
	if !strings.Contains(line, "accordion") || !strings.Contains(line, "[redacted:phone]") {
		t.Errorf("search/accordion: no line entry with its marker: %v\n%s", ents, line)
	}
	noSecret(t, "the log line's result", line)
	noSecret(t, "context/accordion", readText(t, filepath.Join(mnt, "context/accordion")))
	noSecret(t, "meta/errors", readText(t, filepath.Join(mnt, "meta/errors")))
	if mode == "store" {
		// semantic/ keeps versions: the replaced bytes were masked too.
		p := filepath.Join(mnt, redactCases[0].file)
		check(t, os.WriteFile(p, []byte("Rewritten gondola memo, still "+redactCases[0].secret+"\n"), 0o644))
		v1 := readText(t, filepath.Join(mnt, "history", redactCases[0].file, "v1.md"))
		if !strings.Contains(v1, "[redacted:email]") {
			t.Errorf("history v1: %q", v1)
		}
		noSecret(t, "history/"+redactCases[0].file+"/v1.md", v1)
		noSecret(t, "the rewrite", readText(t, p))
	}
	var stats struct {
		Redactions []struct {
			Rule    string
			Indexed int
			Stored  *uint64
		}
	}
	check(t, json.Unmarshal([]byte(readText(t, filepath.Join(mnt, "meta/stats.json"))), &stats))
	if len(stats.Redactions) != 6 {
		t.Errorf("stats.json redactions: %+v", stats.Redactions)
	}
	for _, r := range stats.Redactions {
		if mode == "index" && r.Indexed == 0 || mode == "store" && (r.Stored == nil || *r.Stored == 0) {
			t.Errorf("stats.json: rule %s counts nothing: %+v", r.Rule, r)
		}
	}
	maint := mustRun(t, "maintain", "--data", data)
	noSecret(t, "mnemofs maintain", maint.stdout+maint.stderr)
	noSecret(t, "meta/maintenance.log", readText(t, filepath.Join(mnt, "meta/maintenance.log")))
	// What is committed is on disk: fsync every file, then grep.
	filepath.Walk(filepath.Join(mnt, "semantic"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if f, err := os.Open(p); err == nil {
				f.Sync()
				f.Close()
			}
		}
		return nil
	})
	found := grepData(t, data)
	if mode == "index" && found == "" {
		t.Error("index mode: grep -r of the data dir finds no secret: the store-mode check below would prove nothing")
	}
	if mode == "store" && found != "" {
		t.Errorf("store mode: grep -r of the mounted data dir finds the secrets in:\n%s", found)
	}
	m.stop(t, syscall.SIGTERM)
	noSecret(t, "the mount's output", m.stdout.String()+m.stderr.String())
	if found := grepData(t, data); mode == "store" && found != "" {
		t.Errorf("store mode: grep -r of the data dir finds the secrets in:\n%s", found)
	}
}
