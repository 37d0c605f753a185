package e2e

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testchrome"
)

// reportSource writes n memories as plain files for import: three users
// (bob's named bobonly-…) and public ones, 20 tags, related links (a
// chain and ten hubs), created over 30 days; every body holds
// BODYTEXT-<i>, which no page may show.
func reportSource(t *testing.T, n int) string {
	src := t.TempDir()
	dirs := []string{"episodic/notes", "semantic/kb", "working/tasks", "projects/beta"}
	users := []string{"alice", "bob", "carol", ""}
	var paths []string
	for i := 0; i < n; i++ {
		dir, u := dirs[i%len(dirs)], users[i/len(dirs)%len(users)]
		name := fmt.Sprintf("m%04d.md", i)
		if u == "bob" {
			name = fmt.Sprintf("bobonly-%04d.md", i)
		}
		p := "/" + dir + "/" + name
		var fm strings.Builder
		fmt.Fprintf(&fm, "---\ncreated: %s\ntags: [t%02d, shared]\n", time.Date(2026, 9, 1+i%30, 10, 0, 0, 0, time.UTC).Format(time.RFC3339), i%20)
		if u != "" {
			fmt.Fprintf(&fm, "user: %s\n", u)
		}
		var rel []string
		if i > 0 && i%3 != 0 {
			rel = append(rel, strconv.Quote(paths[i-1]))
		}
		if i >= 10 && i%2 == 0 {
			rel = append(rel, strconv.Quote(paths[i%10]))
		}
		if len(rel) > 0 {
			fmt.Fprintf(&fm, "related: [%s]\n", strings.Join(rel, ", "))
		}
		fmt.Fprintf(&fm, "---\nBODYTEXT-%04d what the agent wrote down\n", i)
		check(t, os.MkdirAll(filepath.Join(src, dir), 0o755))
		check(t, os.WriteFile(filepath.Join(src, dir, name), []byte(fm.String()), 0o644))
		paths = append(paths, p)
	}
	return src
}

// checkPage fails if page shows a body, refers outside itself or lacks a
// chart.
func checkPage(t *testing.T, what, page string) {
	t.Helper()
	if strings.Contains(page, "BODYTEXT") || strings.Contains(page, "what the agent wrote") {
		t.Errorf("%s shows a memory's body", what)
	}
	if m := regexp.MustCompile(`https?://|(src|href)\s*=\s*["']?//`).FindString(page); m != "" {
		t.Errorf("%s refers outside itself: %q", what, m)
	}
	for _, id := range []string{"growth", "growth-bytes", "tiers", "tags", "users", "graph", "maintenance", "latency"} {
		if !strings.Contains(page, `<svg id="`+id+`"`) {
			t.Errorf("%s has no svg#%s", what, id)
		}
	}
}

// TestReportMount builds a store of 1,000 memories (import, a maintenance
// pass, edits and searches through the mount), reads meta/report.html and
// loads it in headless Chromium: every chart drawn, search and write
// latency from the mount, no request made. mnemofs report gives the page
// through the mount too, and refuses a --user the mount is not for.
func TestReportMount(t *testing.T) {
	t.Parallel()
	b := testchrome.New(t)
	data, mnt, out := t.TempDir(), t.TempDir(), t.TempDir()
	mustRun(t, "--data", data, "import", reportSource(t, 1000))
	mustRun(t, "--data", data, "maintain", "--now", time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339))
	m := startMount(t, data, mnt)
	kb, err := os.ReadDir(filepath.Join(mnt, "semantic/kb"))
	check(t, err)
	for _, e := range kb[:25] { // semantic/ is versioned: edits keep versions
		p := filepath.Join(mnt, "semantic/kb", e.Name())
		old, err := os.ReadFile(p)
		check(t, err)
		check(t, os.WriteFile(p, append(old, "edited\n"...), 0o644))
	}
	for _, q := range []string{"agent", "wrote down", "shared"} {
		if _, err := os.ReadDir(filepath.Join(mnt, "search", url.PathEscape(q))); err != nil { // timed as "search"
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(mnt, "meta/report.html"))
	check(t, err)
	page := string(raw)
	checkPage(t, "meta/report.html", page)
	file := filepath.Join(out, "report.html")
	check(t, os.WriteFile(file, raw, 0o644))
	dom := b.DumpDOM(t, file)
	if !strings.Contains(dom, `data-js="ready"`) {
		t.Error("the page's script did not run")
	}
	count := func(id, elem, class string) int { return testchrome.Count(testchrome.Element(dom, id), elem, class) }
	if got := count("growth", "rect", "g-new"); got != 30 {
		t.Errorf("growth: %d bars of new memories, want 30 days", got)
	}
	if got := count("growth", "rect", "g-ver"); got == 0 {
		t.Error("growth: no bar for the edits")
	}
	if s, l := count("tiers", "path", "slice"), count("tiers", "rect", "legend"); s != l || s < 4 {
		t.Errorf("tiers: %d slices, %d legend entries; want equal, ≥ 4", s, l)
	}
	if got := count("tags", "rect", "bar"); got != 15 {
		t.Errorf("tags: %d bars, want the top 15 of 21", got)
	}
	if got := count("users", "rect", "bar"); got != 3 {
		t.Errorf("users: %d bars, want 3", got)
	}
	if n := count("graph", "circle", "node"); n == 0 || n > 150 || count("graph", "line", "edge") == 0 {
		t.Errorf("graph: %d nodes, %d edges; want 1..150 and some", n, count("graph", "line", "edge"))
	}
	if !strings.Contains(testchrome.Element(dom, "graph-cap"), "Capped") {
		t.Error("the page does not say the graph was capped")
	}
	if count("maintenance", "rect", "m-bar") == 0 {
		t.Error("maintenance: no bars")
	}
	lat := testchrome.Element(dom, "latency")
	for _, op := range []string{"search", "write"} {
		if !strings.Contains(lat, `class="lat lat-p99" data-op="`+op+`"`) {
			t.Errorf("latency: no p99 of %s", op)
		}
	}
	if n, last := b.Requests(); n != 0 {
		t.Errorf("the page made %d requests (last %s)", n, last)
	}

	// The CLI, through the mount.
	cli := filepath.Join(out, "cli.html")
	mustRun(t, "--data", data, "report", "--out", cli)
	got, err := os.ReadFile(cli)
	check(t, err)
	checkPage(t, "mnemofs report --out", string(got))
	if r := mustRun(t, "--data", data, "report"); !strings.Contains(r.stdout, `<svg id="graph"`) || !strings.Contains(r.stdout, "1000 memories") {
		t.Errorf("mnemofs report to stdout: %.300s", r.stdout)
	}
	oneErrorLine(t, runMnemofs(t, "--data", data, "report", "--user", "alice"), "mounted for every user")
	m.stop(t, syscall.SIGTERM)
}

// TestReportUser: alice's report, from the CLI with the store unmounted,
// from meta/report.html of a --user alice mount and from the CLI through
// that mount, shows none of bob's memories nor bob himself.
func TestReportUser(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	mustRun(t, "--data", data, "import", reportSource(t, 200))
	all := mustRun(t, "--data", data, "report").stdout
	if !strings.Contains(all, "bobonly-") || !strings.Contains(all, `data-label="bob"`) {
		t.Fatal("the whole store's report shows no bob: the test is blind")
	}
	alone := mustRun(t, "--data", data, "report", "--user", "alice").stdout
	m := startMount(t, data, mnt, "--user", "alice")
	raw, err := os.ReadFile(filepath.Join(mnt, "meta/report.html"))
	check(t, err)
	through := mustRun(t, "--data", data, "report", "--user", "alice").stdout
	oneErrorLine(t, runMnemofs(t, "--data", data, "report"), "mounted for user alice")
	m.stop(t, syscall.SIGTERM)
	for what, page := range map[string]string{"report --user alice": alone, "meta/report.html": string(raw), "report --user alice (mounted)": through} {
		checkPage(t, what, page)
		if strings.Contains(page, "bobonly") || strings.Contains(page, `data-label="bob"`) {
			t.Errorf("%s shows bob's memories", what)
		}
		// alice's 50 and the 50 public ones.
		if !strings.Contains(page, ">100 memories,") || !strings.Contains(page, "only the memories alice may see") {
			t.Errorf("%s: %s", what, regexp.MustCompile(`<p class="sub" id="summary">[^<]*`).FindString(page))
		}
	}
}
