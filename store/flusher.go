package store

import (
	"errors"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// flusher is the store's clock: every 5 s it persists access statistics
// and makes what was committed durable (durable.go); every
// ptLinger/2 it commits deferred appends and ends lingering passthrough
// sessions (passthrough.go).
func (s *Store) flusher() {
	defer s.done.Done()
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	pt := time.NewTicker(ptLinger / 2)
	defer pt.Stop()
	var lastErr string // a failing sync (a full disk) is said once
	for {
		select {
		case <-s.stop:
			return
		case <-pt.C:
			if !s.loading.Load() {
				s.runDue(time.Now()) // deferred commits, sessions' ends (writestate.go)
			}
		case <-t.C:
			if s.loading.Load() {
				continue // no write is taken during a load (bulkload.go)
			}
			s.hostChores()
			if err := s.flushAccess(); err != nil && !errors.Is(err, backend.ErrUnavailable) { // said once by the KV
				s.log.Printf("saving access times: %v", err)
			}
			// What was committed becomes durable, blob data before the
			// records (durable.go); replaced and removed blobs go once
			// the KV that no longer points at them is.
			if err := s.syncCommitted(); err != nil && err.Error() != lastErr {
				s.log.Printf("syncing the store: %v", err)
				lastErr = err.Error()
			} else if err == nil {
				lastErr = ""
			}
		}
	}
}
