package store

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Health: meta/stats.json reports growth and warnings past the
// policy's thresholds. Growth comes from daily samples of the store's
// size (setting "size.samples": date -> bytes, the last 60 days), taken
// by every stats report and maintenance pass.

// Growth is the change in stored bytes over the last sampled day.
type Growth struct {
	Since      string `json:"since,omitempty"` // the earlier sample's date
	Bytes      int64  `json:"bytes"`
	PerDayByte int64  `json:"per_day_bytes"`
}

// sizeSamples is the setting that keeps the daily sizes: a statistic,
// whose change changes no memory (ChangedSince).
const sizeSamples = "size.samples"

// SampleSize records today's size, bytes (the memories' total), and
// returns the growth since the latest earlier sample. Stats takes one, and
// so does every maintenance pass (package lifecycle).
func (s *Store) SampleSize(now time.Time, bytes int64) Growth {
	samples := map[string]int64{}
	if b, err := s.Setting(sizeSamples); err == nil && len(b) > 0 {
		json.Unmarshal(b, &samples)
	}
	today := now.UTC().Format("2006-01-02")
	var days []string
	for d := range samples {
		days = append(days, d)
	}
	sort.Strings(days)
	var g Growth
	for i := len(days) - 1; i >= 0; i-- {
		if days[i] < today {
			prev, _ := time.Parse("2006-01-02", days[i])
			cur, _ := time.Parse("2006-01-02", today)
			n := int64(cur.Sub(prev).Hours()/24 + 0.5)
			g = Growth{Since: days[i], Bytes: bytes - samples[days[i]]}
			if n > 0 {
				g.PerDayByte = g.Bytes / n
			}
			break
		}
	}
	if samples[today] != bytes {
		samples[today] = bytes
		if len(days) > 60 {
			for _, d := range days[:len(days)-60] {
				delete(samples, d)
			}
		}
		if b, err := json.Marshal(samples); err == nil {
			s.PutSetting(sizeSamples, b)
		}
	}
	return g
}

// warnings lists what is past the policy's health thresholds.
func (s *Store) warnings(st *Stats) []string {
	h := s.Policy().Health
	out := []string{}
	if st.Growth.PerDayByte > h.GrowthPerDayBytes {
		out = append(out, fmt.Sprintf("the store grew %d bytes a day since %s (threshold %d, health.growth_per_day_bytes)",
			st.Growth.PerDayByte, st.Growth.Since, h.GrowthPerDayBytes))
	}
	for _, d := range st.LargestDirs {
		if d.Entries > h.FilesPerDir {
			out = append(out, fmt.Sprintf("%s holds %d entries (threshold %d, health.files_per_dir)", d.Path, d.Entries, h.FilesPerDir))
		}
	}
	return out
}
