package store

import (
	"time"

	"github.com/mnemofs/mnemofs/store/internal/pack"
)

// What the external tests (package store_test, which may import lifecycle
// and transfer) check of the store's insides.

// PackFiles is the most files one pack takes.
const PackFiles = pack.MaxFiles

// SetScratchAge changes Options.ScratchAge of the open store s.
func (s *Store) SetScratchAge(d time.Duration) { s.opts.ScratchAge = d }

// HotOn reports whether the content cache is on.
func (s *Store) HotOn() bool { return s.hot != nil }
