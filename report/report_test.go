package report

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/storetest"
	"github.com/mnemofs/mnemofs/store"
)

// distinct counts the distinct tags and users of what st shows (may).
func distinct(t *testing.T, st *store.Store, may func(uint64) bool) (tags, users map[string]int, paths []string) {
	tags, users = map[string]int{}, map[string]int{}
	err := st.MemoriesFor(may, func(in store.Info) error {
		for _, v := range in.Tags {
			tags[v]++
		}
		for _, v := range in.Users {
			users[v]++
		}
		paths = append(paths, in.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tags, users, paths
}

// checkPrivate fails if page shows a memory's body or unescaped markup
// from a name or tag.
func checkPrivate(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"BODYSECRET", "agent learned", "<img src=x", "<b>bold", "duplicate of another memory"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page shows %q", bad)
		}
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//|url\(|https?://`).FindString(page); m != "" {
		t.Errorf("the page refers outside itself: %q", m)
	}
}

func TestCollect(t *testing.T) {
	d := buildDemo(t, 1000)
	data, err := Collect(d.st, nil, Options{Now: time.Unix(0, d.clock.Load())})
	if err != nil {
		t.Fatal(err)
	}
	if data.Memories != d.memories {
		t.Errorf("memories = %d, want %d", data.Memories, d.memories)
	}
	share := map[string]Share{}
	for _, s := range data.Tiers {
		share[s.Tier] = s
	}
	if share["trash"].Files != d.trashed || d.trashed == 0 {
		t.Errorf("trash = %d memories, want %d", share["trash"].Files, d.trashed)
	}
	if share["working"].Files != 0 || share["archive"].Files == 0 {
		t.Errorf("maintenance archived no working memory: %+v", data.Tiers)
	}
	if share["other"].Files != d.memories/5 {
		t.Errorf("projects/ = %d memories, want %d", share["other"].Files, d.memories/5)
	}
	tags, users, _ := distinct(t, d.st, nil)
	if data.NTags != len(tags) || len(data.Tags) != min(15, len(tags)) || data.Tags[0].Name != "common" || data.Tags[0].N != d.memories {
		t.Errorf("tags: %d of %d, first %+v; want 15 of %d, common first", len(data.Tags), data.NTags, data.Tags[0], len(tags))
	}
	if data.NUsers != len(users) || len(data.Users) != len(d.users) {
		t.Errorf("users: %+v, want %d", data.Users, len(d.users))
	}
	created, versions := 0, 0
	for _, g := range data.Days {
		if g.Created > 0 {
			created++
		}
		if g.Versions > 0 {
			versions++
		}
	}
	if data.Bucket != "day" || created != d.createdDays || versions != d.versionDays {
		t.Errorf("growth: %d days created, %d with versions (by %s); want %d, %d", created, versions, data.Bucket, d.createdDays, d.versionDays)
	}
	g := data.Graph
	if !g.Capped || len(g.Nodes) != defaultMaxNodes || g.AllNodes <= defaultMaxNodes || len(g.Edges) == 0 || g.AllEdges < len(g.Edges) {
		t.Errorf("graph: %d of %d nodes, %d of %d edges, capped %v", len(g.Nodes), g.AllNodes, len(g.Edges), g.AllEdges, g.Capped)
	}
	for _, n := range g.Nodes {
		if n.X < 0 || n.X > 1 || n.Y < 0 || n.Y > 1 {
			t.Fatalf("node %s laid out at %.2f,%.2f, off the page", n.Path, n.X, n.Y)
		}
	}
	if len(data.Maint) == 0 || data.Maint[len(data.Maint)-1].Kinds["archive"] == 0 {
		t.Errorf("maintenance: %+v", data.Maint)
	}
	if len(data.Warnings) == 0 {
		t.Error("no warnings though files_per_dir is 100")
	}
	checkPrivate(t, string(Render(data)))
}

// TestUserReport: a store open for alice, and a reader filter, each give
// a page of only what that reader may see.
func TestUserReport(t *testing.T) {
	d := buildDemo(t, 300)
	_, _, all := distinct(t, d.st, nil)
	st := d.reopen(t, "alice")
	_, users, mine := distinct(t, st, nil)
	if len(mine) == 0 || len(mine) >= len(all) {
		t.Fatalf("alice sees %d of %d memories", len(mine), len(all))
	}
	data, err := Collect(st, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if data.Memories != len(mine) || data.Scope != "alice" {
		t.Errorf("alice's page counts %d memories (scope %q), want %d", data.Memories, data.Scope, len(mine))
	}
	for _, u := range data.Users {
		if u.Name != "alice" {
			t.Errorf("alice's page names user %s", u.Name)
		}
	}
	if len(users) != 1 {
		t.Errorf("alice sees users %v", users)
	}
	page := string(Render(data))
	checkPrivate(t, page)
	seen := map[string]bool{}
	for _, p := range mine {
		seen[p] = true
	}
	for _, p := range all {
		if !seen[p] && strings.Contains(page, html.EscapeString(p)+" (") {
			t.Errorf("alice's page shows %s", p)
		}
	}
	for _, n := range data.Graph.Nodes {
		if !seen[n.Path] {
			t.Errorf("alice's graph holds %s", n.Path)
		}
	}

	// A reader filter on an unrestricted store: every other memory.
	st = d.reopen(t, "")
	may := func(ino uint64) bool { return ino%2 == 0 }
	_, _, some := distinct(t, st, may)
	data, err = Collect(st, may, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if data.Memories != len(some) || data.Scope == "" {
		t.Errorf("the filtered page counts %d (scope %q), want %d", data.Memories, data.Scope, len(some))
	}
	ok := map[string]bool{}
	for _, p := range some {
		ok[p] = true
	}
	for _, n := range data.Graph.Nodes {
		if !ok[n.Path] {
			t.Errorf("the filtered graph holds %s", n.Path)
		}
	}
}

func TestEmptyStore(t *testing.T) {
	d := buildDemo(t, 0)
	page, err := HTML(d.st, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"growth", "growth-bytes", "tiers", "tags", "users", "graph", "maintenance", "latency"} {
		if !strings.Contains(string(page), `<svg id="`+id+`"`) {
			t.Errorf("empty store: no svg#%s", id)
		}
	}
	checkPrivate(t, string(page))
}

func TestParseLog(t *testing.T) {
	log := "2026-11-01T10:00:00Z pass on h: 2 actions, 1 errors\n" +
		"2026-11-01T10:00:00Z archive /working/a -> /archive/scratchpads/x (idle)\n" +
		"2026-11-01T10:00:00Z purge /archive/trash/b (old)\n" +
		"2026-11-01T10:00:00Z error cannot move /working/c\n" +
		"2026-11-03T10:00:00Z pass: 1 actions, 0 errors\n" +
		"2026-11-03T10:00:00Z archive /working/d (idle)\n"
	days, kinds := parseLog(log)
	if len(days) != 2 || days[0].Passes != 1 || days[0].Errors != 1 || days[0].Kinds["archive"] != 1 || days[1].Kinds["archive"] != 1 {
		t.Fatalf("days = %+v", days)
	}
	if strings.Join(kinds, ",") != "archive,purge" {
		t.Fatalf("kinds = %v", kinds)
	}
}

func TestEsc(t *testing.T) {
	for in, want := range map[string]string{
		`<script>"x"&'y'`: "&lt;script&gt;&#34;x&#34;&amp;&#39;y&#39;",
		"bad\xffbyte":     "bad\uFFFDbyte",
		"ctl\x01\x7f":     "ctl\uFFFD\uFFFD",
		"中文 ok":           "中文 ok",
	} {
		if got := esc(in); got != want {
			t.Errorf("esc(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactedLabels: tags and users are values from memories; the page
// shows them masked by the policy's redact: rules, as search does.
func TestRedactedLabels(t *testing.T) {
	st := storetest.NewStore(t, store.Options{})
	storetest.Must(t, st.SetPolicy([]byte("redact:\n  - {detector: email, mode: index}\n")))
	bulk := st.NewBulk()
	storetest.Must(t, bulk.AddFile("/semantic/a.md", []byte("---\nuser: carol@example.com\ntags: [ops, pager-dave@example.org]\n---\nhello\n"), 0o644, store.Owner{}, 0))
	storetest.Must(t, bulk.Flush())
	page, err := HTML(st, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"carol@example.com", "dave@example.org"} {
		if strings.Contains(string(page), secret) {
			t.Errorf("the page shows %q, which an email rule covers", secret)
		}
	}
	if !strings.Contains(string(page), "[redacted:email]") || !strings.Contains(string(page), ">ops<") {
		t.Errorf("the page lacks the masked labels or the plain tag")
	}
}
