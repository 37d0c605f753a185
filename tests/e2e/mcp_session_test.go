package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// sessionModel is what the real trees (episodic, semantic, working)
// should hold: files by path below the root, and directories.
type sessionModel struct {
	files map[string]string
	dirs  map[string]bool
}

// mcpSession is an agent's session that mixes MCP calls and plain file
// operations on a live mount of the same store.
type mcpSession struct {
	t   *testing.T
	p   *mcpProc
	mnt string
	m   sessionModel
}

func (s *mcpSession) in(rel string) string { return filepath.Join(s.mnt, rel) }

// The mount's side.
func (s *mcpSession) mWrite(rel, body string) {
	check(s.t, os.WriteFile(s.in(rel), []byte(body), 0o644))
	s.m.files[rel] = body
}

func (s *mcpSession) mAppend(rel, line string) {
	f, err := os.OpenFile(s.in(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	check(s.t, err)
	_, err = f.WriteString(line)
	check(s.t, errors.Join(err, f.Close()))
	s.m.files[rel] += line
}

// mSave is an atomic save (sed -i, editors): a new file renamed over.
func (s *mcpSession) mSave(rel, body string) {
	tmp := s.in(filepath.Dir(rel) + "/.save-" + filepath.Base(rel))
	check(s.t, os.WriteFile(tmp, []byte(body), 0o644))
	check(s.t, os.Rename(tmp, s.in(rel)))
	s.m.files[rel] = body
}

func (s *mcpSession) mMkdir(rel string) {
	check(s.t, os.MkdirAll(s.in(rel), 0o755))
	for d := rel; d != "."; d = filepath.Dir(d) {
		s.m.dirs[d] = true
	}
}

func (s *mcpSession) mRm(rel string) {
	check(s.t, os.Remove(s.in(rel)))
	delete(s.m.files, rel)
}

func (s *mcpSession) mMv(from, to string) {
	check(s.t, os.Rename(s.in(from), s.in(to)))
	s.m.files[to] = s.m.files[from]
	delete(s.m.files, from)
}

// mRead reads through the mount, which must match the model.
func (s *mcpSession) mRead(rel string) {
	b, err := os.ReadFile(s.in(rel))
	if err != nil || string(b) != s.m.files[rel] {
		s.t.Errorf("cat %s: %q, %v; want %q", rel, b, err, s.m.files[rel])
	}
}

// The MCP side.
func (s *mcpSession) xCreate(rel, body string) {
	s.p.memOK("command", "create", "path", "/memories/"+rel, "file_text", body)
	s.m.files[rel] = body
	for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
		s.m.dirs[d] = true
	}
}

func (s *mcpSession) xReplace(rel, old, repl string) {
	s.p.memOK("command", "str_replace", "path", "/memories/"+rel, "old_str", old, "new_str", repl)
	s.m.files[rel] = strings.Replace(s.m.files[rel], old, repl, 1)
}

func (s *mcpSession) xInsert(rel string, line int, text string) {
	s.p.memOK("command", "insert", "path", "/memories/"+rel, "insert_line", line, "insert_text", text)
	lines := strings.SplitAfter(s.m.files[rel], "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	s.m.files[rel] = strings.Join(slices.Insert(lines, line, text+"\n"), "")
}

func (s *mcpSession) xDelete(rel string) {
	s.p.memOK("command", "delete", "path", "/memories/"+rel)
	for f := range s.m.files {
		if f == rel || strings.HasPrefix(f, rel+"/") {
			delete(s.m.files, f)
		}
	}
	for d := range s.m.dirs {
		if d == rel || strings.HasPrefix(d, rel+"/") {
			delete(s.m.dirs, d)
		}
	}
}

func (s *mcpSession) xRename(from, to string) {
	s.p.memOK("command", "rename", "old_path", "/memories/"+from, "new_path", "/memories/"+to)
	for f, b := range s.m.files {
		if f == from || strings.HasPrefix(f, from+"/") {
			delete(s.m.files, f)
			s.m.files[to+strings.TrimPrefix(f, from)] = b
		}
	}
	for d := range s.m.dirs {
		if d == from || strings.HasPrefix(d, from+"/") {
			delete(s.m.dirs, d)
			s.m.dirs[to+strings.TrimPrefix(d, from)] = true
		}
	}
	for d := filepath.Dir(to); d != "."; d = filepath.Dir(d) {
		s.m.dirs[d] = true
	}
}

// xView views a file over MCP, which must match the model.
func (s *mcpSession) xView(rel string) {
	if got := s.p.viewFile("/memories/" + rel); got != s.m.files[rel] {
		s.t.Errorf("MCP view %s: %q, want %q", rel, got, s.m.files[rel])
	}
}

// xSearch searches over MCP: the first result must be want (with line,
// for a log).
func (s *mcpSession) xSearch(q, want string, line int) {
	var res struct {
		Results []struct {
			Path string `json:"path"`
			Line int    `json:"line"`
		} `json:"results"`
	}
	structuredOf(s.t, s.p.call("search", fields("query", q)), &res)
	if len(res.Results) == 0 || res.Results[0].Path != "/memories/"+want || res.Results[0].Line != line {
		s.t.Errorf("MCP search %q: %+v, want first /memories/%s line %d", q, res.Results, want, line)
	}
}

// xHistory checks the kept versions over MCP: as many as the mount's
// history/<path>/ lists, and want of them (-1: whatever the mount says;
// whether an atomic save keeps the history is the store's, issue 16).
func (s *mcpSession) xHistory(rel string, want int) {
	var h struct {
		Versions []struct{ Version int } `json:"versions"`
	}
	structuredOf(s.t, s.p.call("history", fields("path", "/memories/"+rel)), &h)
	ents, err := os.ReadDir(s.in("history/" + rel))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.t.Fatal(err)
	}
	if len(h.Versions) != len(ents) || want >= 0 && len(h.Versions) != want {
		s.t.Errorf("history of %s: MCP lists %+v, the mount %d versions; want %d", rel, h.Versions, len(ents), want)
	}
}

// verify compares both sides with the model: a walk of the real trees
// through the mount, and the memory tool's listings of them.
func (s *mcpSession) verify(step int, what string) {
	s.t.Helper()
	got := sessionModel{files: map[string]string{}, dirs: map[string]bool{}}
	for _, top := range []string{"episodic", "semantic", "working"} {
		filepath.WalkDir(s.in(top), func(p string, d fs.DirEntry, err error) error {
			check(s.t, err)
			rel, _ := filepath.Rel(s.mnt, p)
			if d.IsDir() {
				if rel != top {
					got.dirs[rel] = true
				}
				return nil
			}
			b, err := os.ReadFile(p)
			check(s.t, err)
			got.files[rel] = string(b)
			return nil
		})
	}
	want := sessionModel{files: s.m.files, dirs: map[string]bool{}}
	for d := range s.m.dirs {
		if !slices.Contains([]string{"episodic", "semantic", "working"}, d) {
			want.dirs[d] = true
		}
	}
	diff := func(side string, g sessionModel) {
		for f, b := range want.files {
			if g.files[f] != b {
				s.t.Errorf("step %d (%s): %s: %s is %q, want %q", step, what, side, f, g.files[f], b)
			}
		}
		for f := range g.files {
			if _, ok := want.files[f]; !ok {
				s.t.Errorf("step %d (%s): %s shows %s, which should not exist", step, what, side, f)
			}
		}
		for d := range want.dirs {
			if !g.dirs[d] {
				s.t.Errorf("step %d (%s): %s lacks the directory %s", step, what, side, d)
			}
		}
		for d := range g.dirs {
			if !want.dirs[d] {
				s.t.Errorf("step %d (%s): %s shows the directory %s, which should not exist", step, what, side, d)
			}
		}
	}
	diff("the mount", got)
	// The MCP side: sizes from the listings, contents from views.
	x := sessionModel{files: map[string]string{}, dirs: map[string]bool{}}
	queue := []string{"/memories/episodic", "/memories/semantic", "/memories/working"}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		v := s.p.memOK("command", "view", "path", d)
		for _, l := range strings.Split(v, "\n")[2:] {
			size, path, _ := strings.Cut(l, "\t")
			rel := strings.TrimPrefix(strings.TrimSuffix(path, "/"), "/memories/")
			if strings.HasSuffix(path, "/") {
				x.dirs[rel] = true
				if strings.Count(path, "/")-strings.Count(d, "/") == 2 {
					queue = append(queue, strings.TrimSuffix(path, "/"))
				}
				continue
			}
			x.files[rel] = s.p.viewFile(path)
			if want := fmt.Sprintf("%dB", len(x.files[rel])); size != want {
				s.t.Errorf("step %d (%s): the MCP listing gives %s as %s, want %s", step, what, rel, size, want)
			}
		}
	}
	diff("the memory tool", x)
}

// TestMCPAgentSession: a scripted agent session of 58 steps on a live
// mount, half MCP calls, half plain file operations on the same store,
// every step checked against a model of the tree from both sides.
func TestMCPAgentSession(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	s := &mcpSession{t: t, mnt: mnt, m: sessionModel{files: map[string]string{}, dirs: map[string]bool{}}}
	// Traced: a rare 60 s wait for a call's answer (seen about once in
	// six CI runs) shows which side held the message.
	s.p = startMCPEnv(t, data, []string{"MNEMOFS_MCP_TRACE=1"})
	s.p.mount = m
	sess := "episodic/sessions/2026-12-01"
	turns := sess + "/turns.jsonl"
	prefs := "semantic/user/preferences.md"
	steps := []struct {
		what string
		do   func()
	}{
		{"mkdir the session", func() { s.mMkdir(sess) }},
		{"first turn, echo >>", func() { s.mAppend(turns, `{"role":"user","text":"plan a trip to Kyoto in April"}`+"\n") }},
		{"MCP views the log", func() { s.xView(turns) }},
		{"second turn", func() { s.mAppend(turns, `{"role":"assistant","text":"cherry blossoms peak in early April"}`+"\n") }},
		{"MCP search finds the turn", func() { s.xSearch("cherry blossoms", turns, 2) }},
		{"MCP creates preferences", func() {
			s.xCreate(prefs, "---\ntags: [travel, food]\nimportance: 0.8\n---\n# Preferences\n- vegetarian\n- window seat\n")
		}},
		{"cat preferences", func() { s.mRead(prefs) }},
		{"MCP str_replace", func() { s.xReplace(prefs, "window seat", "aisle seat") }},
		{"cat after str_replace", func() { s.mRead(prefs) }},
		{"MCP history: create and one change, one kept", func() { s.xHistory(prefs, 1) }},
		{"atomic save in the mount", func() { s.mSave(prefs, strings.Replace(s.m.files[prefs], "vegetarian", "vegan", 1)) }},
		{"MCP view after the save", func() { s.xView(prefs) }},
		{"MCP history agrees with the mount's history/", func() { s.xHistory(prefs, -1) }},
		{"MCP insert a line", func() { s.xInsert(prefs, 6, "- no early flights") }},
		{"cat after insert", func() { s.mRead(prefs) }},
		{"MCP creates a todo", func() { s.xCreate("working/todo.md", "- book hotel\n- buy rail pass\n") }},
		{"append to the todo in the mount", func() { s.mAppend("working/todo.md", "- check visa\n") }},
		{"MCP views the todo", func() { s.xView("working/todo.md") }},
		{"MCP inserts at the top", func() { s.xInsert("working/todo.md", 0, "# Kyoto") }},
		{"third turn", func() { s.mAppend(turns, `{"role":"user","text":"I prefer ryokan over hotels"}`+"\n") }},
		{"MCP search the new turn", func() { s.xSearch("ryokan", turns, 3) }},
		{"MCP context has the preferences", func() {
			c := s.p.ok("context", fields("query", "vegan aisle"))
			if !strings.Contains(c, "aisle seat") {
				t.Errorf("context: %q", c)
			}
			// Its headings name paths the memory tool takes.
			heads := regexp.MustCompile(`(?m)^### (\S+?)(#L\d+)?$`).FindAllStringSubmatch(c, -1)
			if len(heads) == 0 {
				t.Errorf("context without a heading: %q", c)
			}
			for _, h := range heads {
				if !strings.HasPrefix(h[1], "/memories/") {
					t.Errorf("context names %s, not a path under /memories", h[1])
				} else {
					s.p.ok("memory", fields("command", "view", "path", h[1]))
				}
			}
		}},
		{"write a summary in the mount", func() { s.mWrite(sess+"/summary.md", "Trip to Kyoto in April; ryokan.\n") }},
		{"MCP views the summary", func() { s.xView(sess + "/summary.md") }},
		{"MCP replaces in the summary", func() { s.xReplace(sess+"/summary.md", "ryokan", "ryokan, vegan food") }},
		{"cat the summary", func() { s.mRead(sess + "/summary.md") }},
		{"MCP makes a knowledge note in a new directory", func() {
			s.xCreate("semantic/places/kyoto.md", "---\ntags: [japan]\n---\nKyoto: temples, Arashiyama, Nishiki market.\n")
		}},
		{"ls the new directory", func() {
			if ents, err := os.ReadDir(s.in("semantic/places")); err != nil || len(ents) != 1 {
				t.Errorf("ls semantic/places: %v, %v", ents, err)
			}
		}},
		{"mv in the mount", func() { s.mMv("semantic/places/kyoto.md", "semantic/places/kyoto-city.md") }},
		{"MCP views the moved note", func() { s.xView("semantic/places/kyoto-city.md") }},
		{"MCP rename back", func() { s.xRename("semantic/places/kyoto-city.md", "semantic/places/kyoto.md") }},
		{"cat the renamed note", func() { s.mRead("semantic/places/kyoto.md") }},
		{"MCP refuses to overwrite with create", func() {
			s.p.memFails([]string{"already exists"}, "command", "create", "path", "/memories/semantic/places/kyoto.md", "file_text", "clobber")
		}},
		{"MCP refuses an ambiguous str_replace", func() {
			s.p.memFails([]string{"Multiple occurrences"}, "command", "str_replace", "path", "/memories/working/todo.md", "old_str", "- ", "new_str", "* ")
		}},
		{"scratch note in the mount", func() { s.mWrite("working/scratch.md", "temp thoughts\n") }},
		{"MCP deletes the scratch note", func() { s.xDelete("working/scratch.md") }},
		{"the scratch note is gone from the mount", func() {
			if _, err := os.Stat(s.in("working/scratch.md")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("scratch.md: %v", err)
			}
		}},
		{"MCP writes a file the mount removes", func() { s.xCreate("working/draft.md", "draft\n") }},
		{"rm in the mount", func() { s.mRm("working/draft.md") }},
		{"MCP no longer sees it", func() {
			s.p.memFails([]string{"does not exist"}, "command", "view", "path", "/memories/working/draft.md")
		}},
		{"a second session directory over MCP", func() {
			s.xCreate("episodic/sessions/2026-12-02/turns.jsonl", `{"role":"user","text":"what about Osaka"}`+"\n")
		}},
		{"append to it in the mount", func() {
			s.mAppend("episodic/sessions/2026-12-02/turns.jsonl", `{"role":"assistant","text":"Osaka has Dotonbori street food"}`+"\n")
		}},
		{"MCP search the appended line", func() { s.xSearch("Dotonbori", "episodic/sessions/2026-12-02/turns.jsonl", 2) }},
		{"MCP moves a session directory", func() { s.xRename("episodic/sessions/2026-12-02", "episodic/sessions/osaka") }},
		{"ls the moved session", func() { s.mRead("episodic/sessions/osaka/turns.jsonl") }},
		{"MCP search follows the move", func() { s.xSearch("Dotonbori", "episodic/sessions/osaka/turns.jsonl", 2) }},
		{"mkdir in the mount, MCP creates in it", func() {
			s.mMkdir("semantic/skills")
			s.xCreate("semantic/skills/packing.md", "Roll clothes; keep a spare charger.\n")
		}},
		{"MCP views the skill", func() { s.xView("semantic/skills/packing.md") }},
		{"edit the skill in the mount", func() { s.mWrite("semantic/skills/packing.md", "Roll clothes; keep a spare charger and adapter.\n") }},
		{"MCP sees the edit", func() { s.xView("semantic/skills/packing.md") }},
		{"MCP deletes the skills directory", func() { s.xDelete("semantic/skills") }},
		{"the mount no longer has it", func() {
			if _, err := os.Stat(s.in("semantic/skills")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("semantic/skills: %v", err)
			}
		}},
		{"MCP stats count the memories", func() {
			var st struct {
				Memories int `json:"memories"`
			}
			structuredOf(t, s.p.call("stats", fields()), &st)
			if st.Memories < len(s.m.files) {
				t.Errorf("stats: %d memories, want at least the %d in the real trees", st.Memories, len(s.m.files))
			}
		}},
		{"fourth turn", func() { s.mAppend(turns, `{"role":"user","text":"book the Arashiyama ryokan"}`+"\n") }},
		{"MCP views lines 3-4 of the log", func() {
			got := s.p.memOK("command", "view", "path", "/memories/"+turns, "view_range", []int{3, -1})
			if !strings.Contains(got, "     3\t{\"role\":\"user\",\"text\":\"I prefer ryokan") || !strings.Contains(got, "     4\t{\"role\":\"user\",\"text\":\"book the Arashiyama") {
				t.Errorf("view_range of the log: %q", got)
			}
		}},
		{"MCP moves the todo to semantic", func() { s.xRename("working/todo.md", "semantic/trip/todo.md") }},
		{"append to the moved todo in the mount", func() { s.mAppend("semantic/trip/todo.md", "- pack adapter\n") }},
		{"MCP final view of the todo", func() { s.xView("semantic/trip/todo.md") }},
	}
	if len(steps) < 50 {
		t.Fatalf("only %d steps", len(steps))
	}
	for i, st := range steps {
		st.do()
		s.verify(i+1, st.what)
		if t.Failed() {
			t.Fatalf("stopped at step %d (%s)", i+1, st.what)
		}
	}
	t.Logf("%d steps, %d files, %d directories at the end", len(steps), len(s.m.files), len(s.m.dirs))
	s.p.stop()
	m.stop(t, syscall.SIGTERM)
}
