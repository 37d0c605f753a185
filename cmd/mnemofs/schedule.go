package main

import (
	"log"
	"time"

	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/store"
)

// startMaintenance runs a lifecycle pass every maintenance.interval of the
// policy (read again each minute; 0 turns it off) until stopped.
func startMaintenance(st *store.Store, logger *log.Logger, background func() (done func())) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		last := time.Now()
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			iv := time.Duration(st.Policy().Maintenance.Interval)
			if iv == 0 || time.Since(last) < iv {
				continue
			}
			last = time.Now()
			ended := background()
			r, err := lifecycle.Maintain(st, lifecycle.Options{})
			ended()
			switch {
			case err == nil && r.Skipped != "":
				logger.Printf("maintenance: skipped, %s is running a pass", r.Skipped)
			case err != nil:
				logger.Printf("maintenance: %v", err)
			case len(r.Actions) > 0 || len(r.Errors) > 0:
				logger.Printf("maintenance: %d actions, %d errors (meta/maintenance.log)", len(r.Actions), len(r.Errors))
			}
		}
	}()
	return func() { close(done); <-finished }
}
