package store

import "time"

// flusher is the store's clock: every 5 s it persists access statistics
// and, when replaced blobs wait, syncs the store so they can go; every
// ptLinger/2 it commits deferred appends and ends lingering passthrough
// sessions (passthrough.go).
func (s *Store) flusher() {
	defer s.done.Done()
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	pt := time.NewTicker(ptLinger / 2)
	defer pt.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-pt.C:
			s.commitDeferred(0, ptDefer)
			s.endSessions(ptLinger)
		case <-t.C:
			if err := s.flushAccess(); err != nil {
				s.log.Printf("mnemofs: saving access times: %v", err)
			}
			if s.blobs != nil && s.blobs.pending() {
				// Replaced and removed blobs go once the KV that no
				// longer points at them is durable.
				if err := s.Sync(); err != nil {
					s.log.Printf("mnemofs: syncing the store: %v", err)
				}
			}
		}
	}
}
