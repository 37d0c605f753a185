package views

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

// TestIndexRedaction: under an index-mode rule the bytes stay, and the
// index, snippets, line results, context/ and the stats show the marker;
// the secret's own words find nothing.
func TestIndexRedaction(t *testing.T) {
	e, st := engineStore(t)
	if err := st.SetPolicy([]byte("redact:\n  - {detector: email, mode: index}\n")); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		writeFile(t, st, store.RootIno, name, text)
	}
	secret := "zanzibar.quokka@example.org"
	write("note.md", "Write to "+secret+" about the gondola booking.\n")
	write("log.jsonl", "{\"text\":\"hello there\"}\n{\"text\":\"the kayak rental contact is "+secret+"\"}\n{\"text\":\"thanks\"}\n")
	q, _ := ParseQuery("gondola booking")
	rs := e.WithSnippets(q, e.Search(q, Filter{}))
	if len(rs) != 1 || !strings.Contains(rs[0].Snippet, "[redacted:email]") || strings.Contains(rs[0].Snippet, secret) {
		t.Fatalf("results %+v", rs)
	}
	for _, w := range []string{"zanzibar", "quokka", "example.org", secret} {
		q, _ := ParseQuery(w)
		if rs := e.Search(q, Filter{}); len(rs) != 0 {
			t.Errorf("search %q found %+v", w, rs)
		}
	}
	q, _ = ParseQuery("kayak rental")
	rs = e.WithSnippets(q, e.Search(q, Filter{}))
	if len(rs) != 1 || rs[0].Line != 2 || strings.Contains(rs[0].Snippet, secret) || !strings.Contains(rs[0].Snippet, "[redacted:email]") {
		t.Fatalf("line results %+v", rs)
	}
	b, err := e.LineResult(rs[0].Ino, 2, Filter{})
	if err != nil || strings.Contains(string(b), secret) || !strings.Contains(string(b), "[redacted:email]") {
		t.Fatalf("line result %s %v", b, err)
	}
	for _, qs := range []string{"gondola booking", "kayak rental"} {
		q, _ := ParseQuery(qs)
		if c := e.Context(q, Filter{}); strings.Contains(string(c), secret) || !strings.Contains(string(c), "[redacted:email]") {
			t.Fatalf("context %s", c)
		}
	}
	js, err := e.StatsJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var stats struct{ Redactions []Redaction }
	if err := json.Unmarshal(js, &stats); err != nil || len(stats.Redactions) != 1 || stats.Redactions[0].Indexed != 2 || stats.Redactions[0].Stored != nil {
		t.Fatalf("stats %s %v", js, err)
	}
	write("front.md", "---\ncontact: "+secret+"\ntags: [travel]\n---\nbody\n")
	if ix, err := IndexJSON(st, nil); err != nil || strings.Contains(string(ix), secret) || !strings.Contains(string(ix), "[redacted:email]") {
		t.Fatalf("index.json: %s %v", ix, err)
	}
	// No rules: the secret is found again (the policy change re-indexes).
	if err := st.SetPolicy(nil); err != nil {
		t.Fatal(err)
	}
	q, _ = ParseQuery("quokka")
	if rs := e.Search(q, Filter{}); len(rs) < 2 {
		t.Fatalf("without rules: %+v", rs)
	}
}

// TestEmbedInputRedacted: the encoder is never given a secret, and a
// change of the rules embeds the memory again.
func TestEmbedInputRedacted(t *testing.T) {
	enc := &hashEncoder{name: "hash"}
	f := openEmbed(t, t.TempDir(), enc)
	defer func() { f.close() }() // the fixture reopened below
	pol := "redact:\n"
	for _, d := range []string{"api_key", "phone", "card", "iban"} {
		pol += "  - {detector: " + d + ", mode: index}\n"
	}
	if err := f.st.SetPolicy([]byte(pol)); err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{"api_key": "ghp_" + strings.Repeat("Zq9x", 9), "phone": "+44 20 7946 0958", "card": "5500-0000-0000-0004", "iban": "GB82WEST12345698765432"}
	text := "the deploy notes for the staging cluster:"
	for _, v := range secrets {
		text += " " + v + ","
	}
	f.write("deploy.md", text+" and mail ops@corp.example\n")
	f.settle()
	seen := strings.Join(enc.encoded(), "\n")
	for rule, v := range secrets {
		if strings.Contains(seen, v) || !strings.Contains(seen, "[redacted:"+rule+"]") {
			t.Fatalf("encoded %q", seen)
		}
	}
	if !strings.Contains(seen, "ops@corp.example") {
		t.Fatalf("no email rule yet, but the address was not encoded: %q", seen)
	}
	n := len(enc.encoded())
	if err := f.st.SetPolicy([]byte(pol + "  - {detector: email, mode: index}\n")); err != nil {
		t.Fatal(err)
	}
	f.settle()
	if len(enc.encoded()) == n {
		t.Fatal("new rules did not embed the memory again")
	}
	// Reopened, the vectors of the memory are those of its rules: nothing
	// to embed again.
	f.close()
	enc2 := &hashEncoder{name: "hash"}
	f = openEmbed(t, f.dir, enc2)
	f.settle()
	if got := enc2.encoded(); len(got) != 0 {
		t.Fatalf("embedded again after a restart: %q", got)
	}
	if again := strings.Join(enc.encoded()[n:], "\n"); strings.Contains(again, "ops@corp.example") || !strings.Contains(again, "[redacted:email]") {
		t.Fatalf("embedded again: %q", again)
	}
}

// TestRedactionFollowsMoves: a rule limited by paths covers a memory
// moved under them (and a directory moved there), and no longer one moved
// out.
func TestRedactionFollowsMoves(t *testing.T) {
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	e := NewEngine(nil)
	st, err := store.Open(kv, store.Options{OnChange: e.Handle, ScratchAge: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e.Start(st)
	defer e.Stop()
	if err := st.SetPolicy([]byte("redact:\n  - {detector: email, mode: index, paths: [secret/**]}\n")); err != nil {
		t.Fatal(err)
	}
	mk := func(parent uint64, name string) uint64 {
		in, err := st.Mkdir(parent, name, 0o755, store.Owner{})
		if err != nil {
			t.Fatal(err)
		}
		return in.Ino
	}
	open, secret, sub := mk(store.RootIno, "open"), mk(store.RootIno, "secret"), mk(store.RootIno, "sub")
	writeFile(t, st, open, "a.md", "the wombat contact is wombat.keeper@zoo.example\n")
	finds := func() bool {
		q, _ := ParseQuery("keeper")
		return len(e.Search(q, Filter{})) > 0
	}
	if !finds() {
		t.Fatal("outside the rule's paths the address is not indexed")
	}
	if err := st.Rename(open, "a.md", secret, "a.md", 0); err != nil {
		t.Fatal(err)
	}
	if finds() {
		t.Fatal("moved under the rule's paths, the address is still indexed")
	}
	if err := st.Rename(secret, "a.md", sub, "a.md", 0); err != nil {
		t.Fatal(err)
	}
	if !finds() {
		t.Fatal("moved out, the address is not indexed again")
	}
	if err := st.Rename(store.RootIno, "sub", secret, "sub", 0); err != nil {
		t.Fatal(err)
	}
	if finds() {
		t.Fatal("its directory moved under the rule's paths, the address is still indexed")
	}
}
