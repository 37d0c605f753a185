package report

import (
	"sort"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/metrics"
	"github.com/mnemofs/mnemofs/store"
)

// Options tune the page; zero values take the defaults.
type Options struct {
	// Now is when the page is generated (default time.Now).
	Now time.Time
	// MaxNodes caps the association graph (default 150 nodes).
	MaxNodes int
	// TopN is how many tags and users are charted (default 15).
	TopN int
}

const (
	defaultMaxNodes = 150
	defaultTopN     = 15
)

// Tiers are the shares charted, in order: the four trees, the trash
// (archive/trash, apart from the rest of archive/) and every other
// top-level directory.
var Tiers = []string{"episodic", "semantic", "working", "archive", "trash", "other"}

// Data is everything the page shows: counts, paths, names, tags and
// users; never a memory's content.
type Data struct {
	Generated time.Time
	// Scope names the restricted reader ("" for the whole store).
	Scope    string
	Memories int
	Bytes    uint64
	Days     []Day   // growth, oldest first (Bucket wide each)
	Bucket   string  // "day" or "month"
	Tiers    []Share // in Tiers order, zero shares included
	Tags     []Count // top TopN by memories
	Users    []Count
	NTags    int // distinct tags in all
	NUsers   int
	Graph    Graph
	Maint    []MaintDay // maintenance actions by day, oldest first
	Kinds    []string   // the action kinds of Maint, sorted
	Latency  []Latency
	Warnings []string
}

// Day is one bucket of growth: memories created in it (by their created
// time), their bytes now, and the old versions kept that were replaced in
// it (one an edit of a versioned memory), with their bytes.
type Day struct {
	Date         string
	Created      int
	Bytes        uint64
	Versions     int
	VersionBytes uint64
}

// Share is one tier's memories and bytes.
type Share struct {
	Tier  string
	Files int
	Bytes uint64
}

// Count is one value and how many memories carry it.
type Count struct {
	Name string
	N    int
}

// MaintDay is the maintenance of one day: actions by kind, and errors.
type MaintDay struct {
	Date   string
	Passes int
	Kinds  map[string]int
	Errors int
}

// Latency is one operation's percentiles (microseconds).
type Latency struct {
	Op            string
	Count         uint64
	P50, P95, P99 uint64
}

// Collect gathers the page's data from the memories of st that may allows
// (nil: all the store's user sees).
func Collect(st *store.Store, may func(uint64) bool, o Options) (*Data, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = defaultMaxNodes
	}
	if o.TopN <= 0 {
		o.TopN = defaultTopN
	}
	d := &Data{Generated: o.Now.UTC(), Scope: st.User()}
	if d.Scope == "" && may != nil {
		d.Scope = "this reader"
	}
	tiers := map[string]*Share{}
	for _, t := range Tiers {
		tiers[t] = &Share{Tier: t}
	}
	tags, users := map[string]int{}, map[string]int{}
	days := map[string]*Day{}
	day := func(t time.Time) *Day {
		k := t.UTC().Format("2006-01-02")
		if days[k] == nil {
			days[k] = &Day{Date: k}
		}
		return days[k]
	}
	red := st.Redactor()
	var infos []store.Info
	err := st.MemoriesFor(may, func(in store.Info) error {
		d.Memories++
		d.Bytes += in.Size
		s := tiers[tierOf(in.Path)]
		s.Files++
		s.Bytes += in.Size
		// Tags and users are values from the memory's metadata: shown
		// masked by the redact: rules that cover it, as search shows them.
		for _, t := range uniq(in.Tags) {
			tags[red.RedactString(in.Path, t)]++
		}
		for _, u := range uniq(in.Users) {
			users[red.RedactString(in.Path, u)]++
		}
		g := day(in.Created)
		g.Created++
		g.Bytes += in.Size
		if in.Version > 1 {
			vs, err := st.Versions(in.Ino)
			if err != nil {
				return err
			}
			for _, v := range vs {
				at := v.Saved // when it was replaced: the day of an edit
				if at == 0 {
					at = v.Modified
				}
				g := day(time.Unix(0, at))
				g.Versions++
				g.VersionBytes += v.Size
			}
		}
		infos = append(infos, store.Info{Path: in.Path, Related: in.Related})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, t := range Tiers {
		d.Tiers = append(d.Tiers, *tiers[t])
	}
	d.Tags, d.NTags = top(tags, o.TopN), len(tags)
	d.Users, d.NUsers = top(users, o.TopN), len(users)
	d.Days, d.Bucket = buckets(days)
	d.Graph = buildGraph(infos, o.MaxNodes)
	log, err := lifecycle.Log(st, may)
	if err != nil {
		return nil, err
	}
	d.Maint, d.Kinds = parseLog(string(log))
	stats, err := st.StatsFor(may)
	if err != nil {
		return nil, err
	}
	d.Warnings = stats.Warnings
	d.Latency = latencies(metrics.Ops.Summaries())
	return d, nil
}

// tierOf is the tier a memory at path p counts in.
func tierOf(p string) string {
	if p == store.TrashDir || strings.HasPrefix(p, store.TrashDir+"/") {
		return "trash"
	}
	t := store.TopDir(p)
	switch t {
	case "episodic", "semantic", "working", "archive":
		return t
	}
	return "other"
}

func uniq(l []string) []string {
	if len(l) < 2 {
		return l
	}
	seen := map[string]bool{}
	out := l[:0:0]
	for _, v := range l {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// top is the n values with most memories, most first (ties by name).
func top(m map[string]int, n int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].N != out[b].N {
			return out[a].N > out[b].N
		}
		return out[a].Name < out[b].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// maxDays is the longest span drawn a day a bar; longer spans are drawn
// a month a bar.
const maxDays = 120

// buckets lays the days out continuously from the first to the last, a
// day each, or a month each when the span is longer than maxDays.
func buckets(days map[string]*Day) ([]Day, string) {
	if len(days) == 0 {
		return nil, "day"
	}
	var keys []string
	for k := range days {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	first, _ := time.Parse("2006-01-02", keys[0])
	last, _ := time.Parse("2006-01-02", keys[len(keys)-1])
	if last.Sub(first) <= maxDays*24*time.Hour {
		var out []Day
		for t := first; !t.After(last); t = t.AddDate(0, 0, 1) {
			k := t.Format("2006-01-02")
			if g := days[k]; g != nil {
				out = append(out, *g)
			} else {
				out = append(out, Day{Date: k})
			}
		}
		return out, "day"
	}
	var out []Day
	for t := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC); !t.After(last); t = t.AddDate(0, 1, 0) {
		out = append(out, Day{Date: t.Format("2006-01")})
	}
	for _, k := range keys {
		t, _ := time.Parse("2006-01-02", k)
		i := (t.Year()-first.Year())*12 + int(t.Month()) - int(first.Month())
		g, s := days[k], &out[i]
		s.Created += g.Created
		s.Bytes += g.Bytes
		s.Versions += g.Versions
		s.VersionBytes += g.VersionBytes
	}
	return out, "month"
}

// latencyOrder puts the operations the page is about first.
var latencyOrder = []string{"search", "write", "create", "flush", "fsync", "read", "open", "lookup"}

func latencies(m map[string]metrics.Summary) []Latency {
	var out []Latency
	rank := func(op string) int {
		for i, o := range latencyOrder {
			if o == op {
				return i
			}
		}
		return len(latencyOrder)
	}
	for op, s := range m {
		out = append(out, Latency{Op: op, Count: s.Count, P50: s.P50US, P95: s.P95US, P99: s.P99US})
	}
	sort.Slice(out, func(a, b int) bool {
		ra, rb := rank(out[a].Op), rank(out[b].Op)
		if ra != rb {
			return ra < rb
		}
		return out[a].Op < out[b].Op
	})
	return out
}
