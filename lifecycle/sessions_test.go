package lifecycle

import (
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/storetest"
	"github.com/mnemofs/mnemofs/store"
)

// TestSessionLifecycle: sessions are archived whole, by their declared
// importance (summary.md's, else the highest turn's, else the default)
// faded by time without use; a recent read keeps a session; half-life 0
// turns fading off.
func TestSessionLifecycle(t *testing.T) {
	start := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	clock := start
	s := storetest.NewStore(t, store.Options{Now: func() time.Time { return clock }, ScratchAge: -1})
	session := func(name string, turns ...string) uint64 {
		d := storetest.MkdirAll(t, s, "/episodic/sessions/"+name)
		for k, body := range turns {
			storetest.WriteFile(t, s, d, "turn-"+string(rune('1'+k))+".md", []byte(body))
		}
		return d
	}
	imp := func(v string) string { return "---\nimportance: " + v + "\n---\nsaid something\n" }
	low := session("low", imp("0.1"), imp("0.2"))
	mixed := session("mixed", imp("0.2"), imp("0.9"))
	plain := session("plain", "no front matter\n", "nor here\n")
	declared := session("declared", imp("0.1"), imp("0.1"))
	storetest.WriteFile(t, s, declared, "summary.md", []byte(imp("0.95")))
	warm := session("warm", imp("0.1"), imp("0.1"))
	sessDir := storetest.DirIno(t, s, "episodic")
	sd, err := s.Lookup(sessDir, "sessions")
	storetest.Must(t, err)
	single := storetest.WriteFile(t, s, sd.Ino, "2026-01-10.md", []byte(imp("0.1")))

	// A read on day 25 keeps "warm" in use.
	clock = start.Add(25 * 24 * time.Hour)
	wt, err := s.Lookup(warm, "turn-1.md")
	storetest.Must(t, err)
	storetest.Must(t, s.Open(wt.Ino, true))
	storetest.Must(t, s.Release(wt.Ino))

	where := func(ino uint64) string {
		p, err := s.Path(ino)
		storetest.Must(t, err)
		return p
	}
	pass := func(days int) {
		clock = start.Add(time.Duration(days) * 24 * time.Hour)
		r, err := Maintain(s, Options{})
		storetest.Must(t, err)
		if len(r.Errors) != 0 {
			t.Fatalf("day %d: %v", days, r.Errors)
		}
	}
	pass(31)
	for ino, want := range map[uint64]string{
		low:      "/archive/sessions/2026-01/low",
		single:   "/archive/sessions/2026-01/2026-01-10.md",
		mixed:    "/episodic/sessions/mixed",    // 0.9 faded to 0.71
		plain:    "/episodic/sessions/plain",    // default 0.5 faded to 0.39
		declared: "/episodic/sessions/declared", // summary.md's 0.95 wins over the turns' 0.1
		warm:     "/episodic/sessions/warm",     // read 6 days ago
	} {
		if got := where(ino); got != want {
			t.Errorf("day 31: %s, want %s", got, want)
		}
	}
	if n, err := s.Lookup(low, "summary.md"); err != nil || n.Ino == 0 {
		t.Errorf("the archived session has no summary: %v", err)
	}
	pass(70) // plain: 0.5 → 0.29; warm: idle 45 days, 0.1
	for ino, want := range map[uint64]string{
		plain: "/archive/sessions/2026-01/plain",
		warm:  "/archive/sessions/2026-02/warm", // the month of its last use
		mixed: "/episodic/sessions/mixed",       // 0.9 → 0.52
	} {
		if got := where(ino); got != want {
			t.Errorf("day 70: %s, want %s", got, want)
		}
	}
	pass(160) // mixed: 0.9 → 0.27
	if got := where(mixed); got != "/archive/sessions/2026-01/mixed" {
		t.Errorf("day 160: %s", got)
	}
	if got := where(declared); got != "/archive/sessions/2026-01/declared" { // 0.95 → 0.28
		t.Errorf("day 160: %s", got)
	}
	storetest.FsckClean(t, s)

	// Half-life 0: importance never fades.
	storetest.Must(t, s.PutSetting("policy", []byte("lifecycle:\n  importance_half_life: 0\n")))
	keep := session("keep", imp("0.5"))
	pass(1000)
	if got := where(keep); got != "/episodic/sessions/keep" {
		t.Errorf("half-life 0: %s", got)
	}
}
