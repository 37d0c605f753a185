package views

import (
	"errors"
	"log"
	"path"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// indexMax is how much of a file is indexed for search.
const indexMax = 4 << 20

// Entry is what the views know about one memory, kept in memory.
type Entry struct {
	Ino      uint64
	Users    []string
	Type     string
	Tags     []string
	Created  time.Time
	Modified time.Time
	Extra    map[string]any
}

// Engine keeps the catalog of memories and the lexical index in step with
// the store. It is the store's OnChange handler.
type Engine struct {
	st  *store.Store
	idx *search.Index
	log *log.Logger

	// mu guards cat, gen and the caches below.
	mu  sync.RWMutex
	cat map[uint64]*Entry
	gen uint64
	// dirsCache: for a filter key, the directories holding a match.
	dirsCache map[string]dirSet

	// During the initial build, changes are queued and replayed after.
	buildMu  sync.Mutex
	building bool
	queued   map[uint64]bool
	ready    chan struct{}
}

type dirSet struct {
	gen  uint64
	dirs map[uint64]bool
}

// NewEngine returns an engine; call Start after the store is open and pass
// Handle as the store's OnChange.
func NewEngine(logger *log.Logger) *Engine {
	if logger == nil {
		logger = log.Default()
	}
	return &Engine{idx: search.NewIndex(), log: logger, cat: map[uint64]*Entry{},
		dirsCache: map[string]dirSet{}, ready: make(chan struct{}), building: true, queued: map[uint64]bool{}}
}

// Start builds the catalog and index from the store in the background.
// Searches wait until the build is done.
func (e *Engine) Start(st *store.Store) {
	e.st = st
	go e.build()
}

// Ready waits for the initial build.
func (e *Engine) Ready() { <-e.ready }

func (e *Engine) build() {
	t0 := time.Now()
	var inos []uint64
	err := e.st.Memories(func(in store.Info) error {
		inos = append(inos, in.Ino)
		return nil
	})
	if err != nil {
		e.log.Printf("views: listing memories: %v", err)
	}
	for _, ino := range inos {
		e.refresh(ino, true)
	}
	for {
		e.buildMu.Lock()
		q := e.queued
		e.queued = map[uint64]bool{}
		if len(q) == 0 {
			e.building = false
			e.buildMu.Unlock()
			break
		}
		e.buildMu.Unlock()
		for ino := range q {
			e.refresh(ino, true)
		}
	}
	close(e.ready)
	if d := time.Since(t0); d > time.Second {
		e.log.Printf("views: indexed %d memories in %v", len(inos), d.Round(time.Millisecond))
	}
}

// Handle receives the store's change events.
func (e *Engine) Handle(ch []store.Change) {
	e.buildMu.Lock()
	if e.building {
		for _, c := range ch {
			e.queued[c.Ino] = true
		}
		e.buildMu.Unlock()
		return
	}
	e.buildMu.Unlock()
	for _, c := range ch {
		e.refresh(c.Ino, c.Kind == store.Changed)
	}
}

// refresh re-reads one memory; content is re-indexed only when it changed.
func (e *Engine) refresh(ino uint64, content bool) {
	in, err := e.st.Info(ino)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			e.drop(ino)
		}
		return
	}
	a, err := e.st.Attr(ino)
	if err != nil || !a.IsReg() {
		return // a directory moved: paths are computed when needed
	}
	ent := &Entry{Ino: ino, Users: in.Users, Type: in.Type, Tags: in.Tags, Created: in.Created,
		Modified: in.Modified, Extra: in.Extra}
	parent, name := a.Links[0].Parent, a.Links[0].Name
	if content || !e.indexed(ino) {
		parts, err := e.parts(ino, name, a.Size)
		if err != nil {
			e.log.Printf("views: indexing %s: %v", in.Path, err)
		}
		e.idx.Put(ino, parts, parent, name)
	} else {
		e.idx.Move(ino, parent, name)
	}
	e.mu.Lock()
	e.cat[ino] = ent
	e.gen++
	e.mu.Unlock()
}

func (e *Engine) indexed(ino uint64) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cat[ino] != nil
}

func (e *Engine) drop(ino uint64) {
	e.idx.Remove(ino)
	e.mu.Lock()
	delete(e.cat, ino)
	e.gen++
	e.mu.Unlock()
}

// parts splits a file into indexed documents: one per line for JSONL logs,
// else the whole text.
func (e *Engine) parts(ino uint64, name string, size uint64) ([]search.Part, error) {
	buf := make([]byte, min(size, indexMax))
	n, err := e.st.ReadAt(ino, buf, 0)
	if err != nil {
		return nil, err
	}
	text := string(buf[:n])
	switch strings.ToLower(path.Ext(name)) {
	case ".jsonl", ".ndjson":
		var parts []search.Part
		for i, line := range strings.Split(text, "\n") {
			if strings.TrimSpace(line) != "" {
				parts = append(parts, search.Part{Part: uint32(i + 1), Text: line})
			}
		}
		return parts, nil
	}
	return []search.Part{{Text: text}}, nil
}

// Gen changes whenever the catalog changes.
func (e *Engine) Gen() uint64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.gen
}

// Entry returns the catalog entry of ino (nil if not a memory).
func (e *Engine) Entry(ino uint64) *Entry {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cat[ino]
}

// Values lists the distinct users, types or tags (field "user", "type",
// "tag") of the memories matching f, sorted.
func (e *Engine) Values(field string, f Filter) []string {
	e.mu.RLock()
	ents := make([]*Entry, 0, len(e.cat))
	for _, ent := range e.cat {
		ents = append(ents, ent)
	}
	e.mu.RUnlock()
	seen := map[string]bool{}
	for _, ent := range ents {
		var vals []string
		switch field {
		case "user":
			vals = ent.Users
		case "type":
			vals = []string{ent.Type}
		case "tag":
			vals = ent.Tags
		case "date":
			vals = []string{ent.Created.UTC().Format("2006/01/02")}
		}
		if len(vals) == 0 || !e.Match(ent, f) {
			continue
		}
		for _, v := range vals {
			if v != "" && (field == "date" || store.ValidName(v)) {
				seen[v] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Recent returns the n most recently modified memories matching f, newest
// first.
func (e *Engine) Recent(n int, f Filter) []uint64 {
	e.mu.RLock()
	ents := make([]*Entry, 0, len(e.cat))
	for _, ent := range e.cat {
		ents = append(ents, ent)
	}
	e.mu.RUnlock()
	var out []*Entry
	for _, ent := range ents {
		if e.Match(ent, f) {
			out = append(out, ent)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Modified.Equal(out[b].Modified) {
			return out[a].Modified.After(out[b].Modified)
		}
		return out[a].Ino > out[b].Ino
	})
	ids := make([]uint64, 0, min(n, len(out)))
	for _, ent := range out[:min(n, len(out))] {
		ids = append(ids, ent.Ino)
	}
	return ids
}
