package fusefs

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// writeSession writes a session as an agent keeps one: summary.md and a
// turns.jsonl appended a line at a time.
func writeSession(t *testing.T, tf *testFS, dir string, summary string, turns []map[string]any) {
	t.Helper()
	must(t, os.MkdirAll(tf.path(dir), 0o755))
	if summary != "" {
		must(t, os.WriteFile(tf.path(dir+"/summary.md"), []byte(summary), 0o644))
	}
	for _, turn := range turns {
		b, err := json.Marshal(turn)
		must(t, err)
		f, err := os.OpenFile(tf.path(dir+"/turns.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		must(t, err)
		_, err = f.Write(append(b, '\n'))
		must(t, err)
		must(t, f.Close())
	}
}

func sessionTurns() []map[string]any {
	var turns []map[string]any
	say := func(user, speaker, created, text string) {
		turns = append(turns, map[string]any{"user": user, "speaker": speaker, "created": created, "text": text})
	}
	say("alice", "Alice", "2024-03-01T10:00:00Z", "Good morning! How was your weekend?")
	say("alice", "Bot", "2024-03-01T10:01:00Z", "Quiet. Did you go anywhere?")
	say("alice", "Alice", "2024-03-01T10:02:00Z", "I went kayaking on the lake with my sister.")
	say("alice", "Bot", "2024-03-01T10:03:00Z", "Lovely. Was the water cold?")
	say("alice", "Alice", "2024-03-01T10:04:00Z", "Freezing, but the views were worth it.")
	for i := range 6 {
		say("alice", "Bot", "2024-03-01T10:10:00Z", fmt.Sprintf("Filler turn %d about the weather.", i))
	}
	say("alice", "Alice", "2024-04-15T09:00:00Z", "Next month I want to go kayaking in Norway.")
	say("bob", "Bob", "2024-04-16T09:00:00Z", "Bob bought a new kayaking paddle.")
	say("alice", "Bot", "2024-04-15T09:01:00Z", "Norway sounds wonderful for kayaking.")
	return turns
}

// entries returns the result entries of a search directory (without
// .results).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, n := range lsNames(t, dir) {
		if n != ".results" {
			out = append(out, n)
		}
	}
	return out
}

func TestLogLinesAreResults(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	writeSession(t, tf, "episodic/sessions/s1", "", sessionTurns())
	// The four lines that say kayaking come first (the rest of the
	// session follows, lifted by its best match: a sequence prior).
	got := entries(t, tf.path("search/kayaking"))
	for i, n := range got {
		if !strings.HasPrefix(n, fmt.Sprintf("%02d-turns.jsonl#L", i+1)) {
			t.Fatalf("entry %q", n)
		}
	}
	if len(got) < 4 || !sameSet(lineNumbers(got[:4]), "3,12,13,14") {
		t.Fatalf("kayaking: %q, want lines 3, 12, 13, 14 of one log first", got)
	}
	// .results gives each line's path and number and its text.
	res := read(t, tf.path("search/kayaking/.results"))
	for _, want := range []string{"/episodic/sessions/s1/turns.jsonl:3\t", "turns.jsonl:12\t", "turns.jsonl:13\t", "turns.jsonl:14\t", "I went kayaking on the lake"} {
		if !strings.Contains(res, want) {
			t.Fatalf(".results lacks %q:\n%s", want, res)
		}
	}
	// A result holds its turn and two neighbours each way, marked.
	var lake string
	for _, n := range got {
		if strings.HasSuffix(n, "#L3") {
			lake = n
		}
	}
	if lake == "" {
		t.Fatalf("no entry for line 3 in %q", got)
	}
	body := read(t, tf.path("search/kayaking/"+lake))
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "# /episodic/sessions/s1/turns.jsonl#L3 (lines 1-5") {
		t.Fatalf("result file:\n%s", body)
	}
	for i, l := range lines[1:] {
		mark := "-"
		if i+1 == 3 {
			mark = ":"
		}
		if !strings.HasPrefix(l, fmt.Sprintf("%d%s{", i+1, mark)) {
			t.Fatalf("line %d of the result is %q:\n%s", i+1, l, body)
		}
	}
	if !strings.Contains(lines[3], "kayaking on the lake") || strings.Contains(body, "Norway") {
		t.Fatalf("result file:\n%s", body)
	}
	// Result files are generated: read-only, and not the log itself.
	st, err := os.Stat(tf.path("search/kayaking/" + lake))
	must(t, err)
	log, err := os.Stat(tf.path("episodic/sessions/s1/turns.jsonl"))
	must(t, err)
	if os.SameFile(st, log) {
		t.Fatal("a line's result is the whole log")
	}
	wantErrno(t, os.WriteFile(tf.path("search/kayaking/"+lake), []byte("x"), 0o644), syscall.EROFS)
	// A line appended later is a result at once.
	writeSession(t, tf, "episodic/sessions/s1", "", []map[string]any{{"user": "alice", "text": "Kayaking again tomorrow!"}})
	if got := entries(t, tf.path("search/kayaking k:5")); !sameSet(lineNumbers(got), "3,12,13,14,15") {
		t.Fatalf("after an append: %q", got)
	}
}

func TestLogLineFilters(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	writeSession(t, tf, "episodic/sessions/s1", "", sessionTurns())
	lineSet := func(q string) string {
		t.Helper()
		return lineNumbers(entries(t, tf.path("search/"+q)))
	}
	// Per-line dates: the April lines are the only ones after April 1st,
	// and none of them is before it.
	if got := lineSet("kayaking after:2024-04-01"); !sameSet(got, "12,13,14") {
		t.Fatalf("after: lines %q", got)
	}
	if got := lineSet("kayaking before:2024-04-01"); !strings.HasPrefix(got, "3,") || strings.Contains(","+got+",", ",12,") ||
		strings.Contains(","+got+",", ",13,") || strings.Contains(","+got+",", ",14,") {
		t.Fatalf("before: lines %q", got)
	}
	// Per-line users: bob's line is his alone, in user: and in by-user/.
	if got := lineSet("kayaking user:bob"); got != "13" {
		t.Fatalf("user:bob: lines %q", got)
	}
	if got := lineSet("kayaking user:alice k:3"); !sameSet(got, "3,12,14") {
		t.Fatalf("user:alice: lines %q", got)
	}
	byUser := lineNumbers(entries(t, tf.path("by-user/alice/search/kayaking")))
	if ls := strings.Split(byUser, ","); len(ls) < 3 || !sameSet(strings.Join(ls[:3], ","), "3,12,14") || strings.Contains(","+byUser+",", ",13,") {
		t.Fatalf("by-user/alice/search: lines %q", byUser)
	}
	// Neighbours follow the scope: alice's result around line 12 leaves
	// out bob's line 13.
	for _, n := range entries(t, tf.path("by-user/alice/search/kayaking")) {
		if strings.HasSuffix(n, "#L12") {
			if body := read(t, tf.path("by-user/alice/search/kayaking/"+n)); strings.Contains(body, "paddle") || !strings.Contains(body, "14-") {
				t.Fatalf("alice's result shows:\n%s", body)
			}
		}
	}
}

// lineNumbers are the line numbers of result entries "NN-x.jsonl#L<n>".
func lineNumbers(names []string) string {
	var ls []string
	for _, n := range names {
		_, l, _ := strings.Cut(n, "#L")
		ls = append(ls, l)
	}
	return strings.Join(ls, ",")
}

func sameSet(a, b string) bool {
	as, bs := strings.Split(a, ","), strings.Split(b, ",")
	if len(as) != len(bs) {
		return false
	}
	in := map[string]bool{}
	for _, x := range as {
		in[x] = true
	}
	for _, x := range bs {
		if !in[x] {
			return false
		}
	}
	return true
}

func TestContextQuotesTurns(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	writeSession(t, tf, "episodic/sessions/s1",
		"---\nuser: alice\n---\nAlice's weekend: a kayaking trip with her sister; plans for Norway.\n", sessionTurns())
	ctx := read(t, tf.path("context/lake kayaking user:alice budget:400"))
	for _, want := range []string{"### /episodic/sessions/s1/summary.md", "plans for Norway", "### /episodic/sessions/s1/turns.jsonl#L3",
		"- L2 Bot (2024-03-01 10:01): Quiet.", "**I went kayaking on the lake with my sister.**", "- L5 Alice"} {
		if !strings.Contains(ctx, want) {
			t.Fatalf("context lacks %q:\n%s", want, ctx)
		}
	}
	if strings.Count(ctx, "summary.md") != 1 || strings.Count(ctx, "- L3 ") != 1 || strings.Count(ctx, "- L4 ") != 1 {
		t.Fatalf("context quotes the summary or a turn twice:\n%s", ctx)
	}
	if tokens := len(ctx) / 4; tokens > 400 {
		t.Fatalf("context of %d tokens over budget 400", tokens)
	}
	// The log is never pasted whole.
	if strings.Contains(ctx, `{"created"`) {
		t.Fatalf("context holds raw log lines:\n%s", ctx)
	}
}

// TestLogLinesInByDate: a log is under by-date/ for each day its lines
// name, also for lines appended later.
func TestLogLinesInByDate(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("episodic/days.jsonl")
	must(t, os.WriteFile(p, []byte(`{"created":"2024-03-01","text":"first day"}`+"\n"+`{"created":"2024-03-05","text":"second day"}`+"\n"), 0o644))
	for _, d := range []string{"2024/03/01", "2024/03/05"} {
		if _, err := os.Stat(tf.path("by-date/" + d + "/episodic/days.jsonl")); err != nil {
			t.Errorf("by-date/%s: %v", d, err)
		}
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString(`{"created":"2024-04-10","text":"later"}` + "\n")
	must(t, err)
	must(t, f.Close())
	if _, err := os.Stat(tf.path("by-date/2024/04/10/episodic/days.jsonl")); err != nil {
		t.Errorf("by-date/2024/04/10 after an append: %v", err)
	}
	if _, err := os.Stat(tf.path("by-date/2024/03/02")); err == nil {
		t.Error("by-date/2024/03/02 exists")
	}
}

// TestListingComputesNoGeneratedFile: listing search/<q>/ (a READDIRPLUS,
// which looks up every entry it returns) computes neither .results (a
// snippet of every result, read from the store) nor the file of a log's
// line (the log read for its neighbours); a stat of one, or a read, does,
// and its size is what the read gives.
func TestListingComputesNoGeneratedFile(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	writeSession(t, tf, "episodic/sessions/s1", "", sessionTurns())
	must(t, os.WriteFile(tf.path("semantic/kayak.md"), []byte("A kayaking note, not a log."), 0o644))
	gen := &tf.srv.notify.fsys.generated
	for _, q := range []string{"kayaking", "kayaking k:3", "weather"} {
		before := gen.Load()
		ents, err := os.ReadDir(tf.path("search/" + q))
		must(t, err)
		if len(ents) < 3 {
			t.Fatalf("search/%s lists %d entries", q, len(ents))
		}
		if n := gen.Load() - before; n != 0 {
			t.Fatalf("listing search/%s computed %d generated files", q, n)
		}
		var line, memory string
		for _, e := range ents {
			switch {
			case strings.Contains(e.Name(), "#L") && line == "":
				line = e.Name()
			case strings.HasSuffix(e.Name(), "-kayak.md"):
				memory = e.Name()
			}
		}
		if line == "" {
			t.Fatalf("search/%s: no log line among %v", q, ents)
		}
		for _, name := range []string{".results", line} {
			p := tf.path("search/" + q + "/" + name)
			st, err := os.Stat(p)
			must(t, err)
			if body := read(t, p); st.Size() != int64(len(body)) || len(body) == 0 {
				t.Fatalf("search/%s/%s: stat says %d bytes, a read gives %d", q, name, st.Size(), len(body))
			}
		}
		if gen.Load() == before {
			t.Fatalf("stat and read of search/%s/.results computed nothing", q)
		}
		if q == "kayaking" {
			// A memory among the results is itself, attributes and all.
			st, err := os.Stat(tf.path("search/kayaking/" + memory))
			must(t, err)
			if st.Size() != int64(len("A kayaking note, not a log.")) {
				t.Fatalf("search/kayaking/%s: %d bytes", memory, st.Size())
			}
		}
	}
}
