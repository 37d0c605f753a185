package store

import (
	"strings"
	"testing"
	"time"
)

func TestHealthGrowthAndWarnings(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s := newStore(t, Options{Now: func() time.Time { return clock }, ScratchAge: -1})
	sem := dirIno(t, s, "semantic")
	writeFile(t, s, sem, "a.md", make([]byte, 1000))
	st, err := s.Stats()
	must(t, err)
	if st.Growth.Since != "" || len(st.Warnings) != 0 {
		t.Fatalf("first day: growth %+v, warnings %v", st.Growth, st.Warnings)
	}
	must(t, s.PutSetting("policy", []byte("health:\n  growth_per_day_bytes: 100\n  files_per_dir: 2\n")))
	clock = clock.Add(48 * time.Hour)
	writeFile(t, s, sem, "b.md", make([]byte, 3000))
	writeFile(t, s, sem, "c.md", make([]byte, 1000))
	st, err = s.Stats()
	must(t, err)
	if st.Growth.Since != "2026-03-01" || st.Growth.Bytes != 4000 || st.Growth.PerDayByte != 2000 {
		t.Fatalf("growth %+v, want 4000 bytes since 2026-03-01, 2000 a day", st.Growth)
	}
	w := strings.Join(st.Warnings, "\n")
	if !strings.Contains(w, "grew 2000 bytes a day") || !strings.Contains(w, "/semantic holds 3 entries") {
		t.Fatalf("warnings:\n%s", w)
	}
}
