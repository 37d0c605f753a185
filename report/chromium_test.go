package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testchrome"
	"github.com/mnemofs/mnemofs/metrics"
)

// TestReportChromium loads the page of a store of 1,000 memories in
// headless Chromium with the network shut and checks that every chart
// was drawn with the expected number of marks, that the script ran under
// the page's Content-Security-Policy, that no request was made, and that
// the screenshot is a real picture. MNEMOFS_REPORT_SCREENSHOT=FILE keeps
// the screenshot (docs/report.png is made so).
func TestReportChromium(t *testing.T) {
	b := testchrome.New(t)
	d := buildDemo(t, 1000)
	for i := 0; i < 200; i++ { // requests as a mount would time them
		metrics.Ops.Get("search").Observe(time.Duration(300+i*40) * time.Microsecond)
		metrics.Ops.Get("write").Observe(time.Duration(20+i) * time.Microsecond)
	}
	data, err := Collect(d.st, nil, Options{Now: time.Unix(0, d.clock.Load())})
	if err != nil {
		t.Fatal(err)
	}
	page := Render(data)
	checkPrivate(t, string(page))
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}

	dom := b.DumpDOM(t, file)
	if !strings.Contains(dom, `data-js="ready"`) {
		t.Error("the page's script did not run")
	}
	checkPrivate(t, dom)
	count := func(id, elem, class string) int {
		svg := testchrome.Element(dom, id)
		if svg == "" {
			t.Fatalf("no #%s in the rendered page", id)
		}
		return testchrome.Count(svg, elem, class)
	}
	daysWith := func(f func(Day) bool) int {
		n := 0
		for _, g := range data.Days {
			if f(g) {
				n++
			}
		}
		return n
	}
	if got := count("growth", "rect", "g-new"); got != d.createdDays {
		t.Errorf("growth: %d bars of new memories, want %d days", got, d.createdDays)
	}
	if got := count("growth", "rect", "g-ver"); got != d.versionDays {
		t.Errorf("growth: %d bars of versions, want %d days", got, d.versionDays)
	}
	if got := count("growth", "path", "g-total") + count("growth-bytes", "path", "gb-total"); got != 2 {
		t.Errorf("growth: %d cumulative lines, want 2", got)
	}
	if got, want := count("growth-bytes", "rect", "gb-new"), daysWith(func(g Day) bool { return g.Bytes > 0 }); got != want || got == 0 {
		t.Errorf("growth: %d bars of bytes, want %d", got, want)
	}
	tiers := 0
	for _, s := range data.Tiers {
		if s.Files > 0 {
			tiers++
		}
	}
	if got := count("tiers", "path", "slice"); got != tiers || tiers != 5 { // episodic semantic archive trash other
		t.Errorf("tiers: %d slices, want %d (and 5)", got, tiers)
	}
	tags, users, _ := distinct(t, d.st, nil)
	if got := count("tags", "rect", "bar"); got != min(defaultTopN, len(tags)) {
		t.Errorf("tags: %d bars, want %d", got, min(defaultTopN, len(tags)))
	}
	if got := count("users", "rect", "bar"); got != len(users) || got != len(demoUsers) {
		t.Errorf("users: %d bars, want %d", got, len(users))
	}
	nodes, edges := count("graph", "circle", "node"), count("graph", "line", "edge")
	if nodes == 0 || nodes > defaultMaxNodes || nodes != len(data.Graph.Nodes) || edges == 0 || edges != len(data.Graph.Edges) {
		t.Errorf("graph: %d nodes, %d edges drawn; want %d ≤ %d, %d", nodes, edges, len(data.Graph.Nodes), defaultMaxNodes, len(data.Graph.Edges))
	}
	cap := testchrome.Element(dom, "graph-cap")
	if !strings.Contains(cap, "Capped: showing "+strconv.Itoa(nodes)+" of the ") || !strings.Contains(cap, `data-capped="true"`) {
		t.Errorf("the page does not say the graph was capped: %s", cap)
	}
	if got := count("maintenance", "rect", "m-bar"); got == 0 {
		t.Error("maintenance: no bars")
	}
	if got := count("latency", "rect", "lat-p99"); got != len(data.Latency) || got < 2 {
		t.Errorf("latency: %d p99 bars, want %d (≥ 2)", got, len(data.Latency))
	}
	if got := testchrome.Count(testchrome.Element(dom, "warnings"), "li", "warning"); got != len(data.Warnings) || got == 0 {
		t.Errorf("warnings: %d shown, want %d (≥ 1)", got, len(data.Warnings))
	}
	if n, last := b.Requests(); n != 0 {
		t.Errorf("the page made %d requests (last %s)", n, last)
	}

	shot := filepath.Join(dir, "report.png")
	b.Screenshot(t, file, shot, 1000, 3100)
	raw, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	colours := map[uint32]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 7 {
		for x := r.Min.X; x < r.Max.X; x += 7 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			colours[cr>>12<<8|cg>>12<<4|cb>>12] = true
		}
	}
	if r.Dx() != 1000 || len(colours) < 8 {
		t.Errorf("screenshot %v with %d colours: not the page", r, len(colours))
	}
	if n, last := b.Requests(); n != 0 {
		t.Errorf("the page made %d requests (last %s)", n, last)
	}
	if keep := os.Getenv("MNEMOFS_REPORT_SCREENSHOT"); keep != "" {
		if err := os.WriteFile(keep, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
