//go:build bugs

package fusefs

// Known product bugs found by the concurrency test (concurrency_test.go).
// They fail today; run them with
//
//	go test -race -tags bugs -run TestBug ./fusefs/

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestBugRecentRacesWithLogAppends (needs -race): views.Engine.Recent,
// behind recent/ and context/, copies the catalog's *Entry pointers under
// the read lock and then sorts them by Entry.Modified with no lock, while
// the engine's worker (appendLines, views/apply.go) sets Modified of the
// same Entry in place when a log grows. A data race (a torn time.Time
// read); the race detector reports it within a few seconds of appends
// and recent/ or context/ reads. TestConcurrentProcesses reads neither
// until this is fixed.
func TestBugRecentRacesWithLogAppends(t *testing.T) {
	tf := testMount(t)
	logs := []string{tf.path("working/a.jsonl"), tf.path("working/b.jsonl")}
	for _, l := range logs {
		must(t, os.WriteFile(l, []byte("{\"e\": \"start\"}\n"), 0o644))
	}
	end := time.Now().Add(3 * time.Second)
	done := make(chan error, 1)
	go func() {
		for i := 0; time.Now().Before(end); i++ {
			f, err := os.OpenFile(logs[i%2], os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				done <- err
				return
			}
			_, err = fmt.Fprintf(f, "{\"e\": \"event %d\"}\n", i)
			if err = errors.Join(err, f.Close()); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for time.Now().Before(end) {
		if _, err := os.ReadDir(tf.path("recent/working")); err != nil {
			t.Error(err)
		}
		if _, err := os.ReadFile(tf.path("context/event")); err != nil {
			t.Error(err)
		}
	}
	must(t, <-done)
}
