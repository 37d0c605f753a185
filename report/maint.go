package report

import (
	"sort"
	"strings"
	"time"
)

// parseLog reads meta/maintenance.log as lifecycle.Log writes it for the
// reader (so its filtering is the log's own): a line "TIME pass…: N
// actions, M errors" opens a pass, "TIME error …" is an error, and
// "TIME KIND PATH …" an action of that kind. It returns the days with a
// pass, oldest first, and the action kinds seen.
func parseLog(log string) ([]MaintDay, []string) {
	days := map[string]*MaintDay{}
	kinds := map[string]bool{}
	for _, line := range strings.Split(log, "\n") {
		ts, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			continue
		}
		k := t.UTC().Format("2006-01-02")
		d := days[k]
		if d == nil {
			d = &MaintDay{Date: k, Kinds: map[string]int{}}
			days[k] = d
		}
		word, _, _ := strings.Cut(rest, " ")
		switch {
		case strings.HasPrefix(rest, "pass:") || strings.HasPrefix(rest, "pass on "):
			d.Passes++
		case word == "error":
			d.Errors++
		case word != "" && len(word) <= 20 && strings.Trim(word, "abcdefghijklmnopqrstuvwxyz-_") == "":
			d.Kinds[word]++
			kinds[word] = true
		}
	}
	var out []MaintDay
	for _, d := range days {
		out = append(out, *d)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Date < out[b].Date })
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return out, ks
}
