package views

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/mnemofs/mnemofs/search"
)

// Encoder turns texts into L2-normalised vectors (embed.Encoder).
type Encoder interface {
	Encode(texts []string) ([][]float32, error)
	Dim() int
	Name() string
}

// Embedding in the background. Every memory whose content changed is put
// in the pending set; one worker takes a batch at a time, reads the
// memories, encodes their chunks in one call, and stores each memory's
// vectors with the sha256 of the content they came from (backend key
// e<ino>). Writers never wait: the set is filled by the views worker.
//
// The queue is persistent by construction: at start the stored vectors are
// loaded with their hashes, the build enqueues every memory, and the
// worker skips a memory whose stored hash is its content's. So whatever was
// pending when the process stopped (or changed while no model was loaded)
// is embedded after the next start, and nothing else. A different model
// (name or dimension) drops every stored vector.

const (
	embedBatch  = 32       // memories per Encode call
	chunkChars  = 1000     // text per vector
	chunksMax   = 16       // vectors per memory (the rest of a long file is not embedded)
	embedReadMx = 64 << 10 // bytes of a memory read for embedding
)

// embedder embeds memories in the background (its own goroutine, run)
// and keeps their vectors. Its lock, mu, guards the pending set and what
// is embedded; it is held while a memory's vectors are stored, and no
// other lock of the views is taken under it. Without an encoder
// (SetEncoder) it is off: nothing is queued, and search is lexical.
type embedder struct {
	enc Encoder
	vec *search.Vectors
	src Store // set by Engine.Start, before the worker runs
	log *log.Logger

	mu      sync.Mutex
	pending map[uint64]bool
	have    map[uint64]string // ino -> sha256 of the embedded content
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}

	embedded, failed atomic.Uint64
	busy             atomic.Int64 // memories taken from pending, not yet done
	lastErr          atomic.Value // string
}

func newEmbedder(logger *log.Logger) *embedder {
	return &embedder{log: logger, pending: map[uint64]bool{}, have: map[uint64]string{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// setEncoder turns embedding on (Engine.SetEncoder); before start.
func (m *embedder) setEncoder(enc Encoder) {
	m.enc, m.vec = enc, search.NewVectors(enc.Dim())
}

// bind gives the embedder the store it reads memories from and keeps
// vectors in.
func (m *embedder) bind(src Store) { m.src = src }

// on reports an embedder with an encoder.
func (m *embedder) on() bool { return m.enc != nil }

// start loads the stored vectors and runs the embedding goroutine.
func (m *embedder) start() {
	if !m.on() {
		return
	}
	if err := m.load(); err != nil {
		m.log.Printf("views: loading embeddings: %v", err)
	}
	go m.run()
}

// end stops the embedding goroutine, after start.
func (m *embedder) end() {
	if !m.on() {
		return
	}
	close(m.stop)
	<-m.done
}

// load reads the stored vectors (dropping them all if another model made
// them). It runs before the build, which then enqueues every memory.
func (m *embedder) load() error {
	st := m.src
	id := []byte(fmt.Sprintf("%s/%d", m.enc.Name(), m.enc.Dim()))
	stored, err := st.EmbedModel()
	if err != nil {
		return err
	}
	if string(stored) != string(id) {
		if st.ReadOnly() {
			return nil // another model's vectors: embed anew, in memory only
		}
		return st.ResetVectors(id)
	}
	var stale []uint64
	err = st.ScanVectors(func(ino uint64, v []byte, live bool) bool {
		if !live {
			// Removed by an older version, whose purge left the vectors.
			// (Existence, not visibility: another user's stay.)
			stale = append(stale, ino)
			return true
		}
		sha, vecs, err := decodeVectors(v, m.enc.Dim())
		if err == nil && m.vec.Put(ino, vecs) == nil {
			m.have[ino] = sha
		}
		return true
	})
	if err != nil || len(stale) == 0 || st.ReadOnly() {
		return err
	}
	return st.DeleteVectors(stale...)
}

// enqueue marks a memory as changed.
func (m *embedder) enqueue(ino uint64) {
	if !m.on() {
		return
	}
	m.mu.Lock()
	m.pending[ino] = true
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// remove forgets a memory that is gone.
func (m *embedder) remove(ino uint64) {
	if !m.on() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pending, ino)
	if _, ok := m.have[ino]; ok {
		delete(m.have, ino)
		m.vec.Remove(ino)
		if !m.src.ReadOnly() {
			_ = m.src.DeleteVectors(ino)
		}
	}
}

// searchable reports vectors to search: on, and something embedded.
func (m *embedder) searchable() bool { return m.on() && m.vec.Len() > 0 }

// vectorsGen changes whenever the vectors do.
func (m *embedder) vectorsGen() uint64 { return m.vec.Gen() }

// encode is the vector of a query's text.
func (m *embedder) encode(text string) ([][]float32, error) { return m.enc.Encode([]string{text}) }

// nearest are the k memories nearest to the vector q among those filter
// keeps, and how the query's cosines spread (search.Fuse).
func (m *embedder) nearest(q []float32, k int, filter func(uint64) bool) ([]search.VHit, search.Dist, error) {
	return m.vec.SearchDist(q, k, filter)
}

// EmbedStats is the embedding part of meta/stats.json.
type EmbedStats struct {
	Model    string `json:"model"`
	Dim      int    `json:"dim"`
	Memories int    `json:"memories"` // with vectors
	Vectors  int    `json:"vectors"`
	// Approximate: searches read the nearest lists of the vector index,
	// not every vector (past search.ApproxRows, search/ivf.go).
	Approximate bool   `json:"approximate"`
	Backlog     int    `json:"backlog"` // memories waiting to be embedded
	Embedded    uint64 `json:"embedded"`
	Failed      uint64 `json:"failed"`
	LastError   string `json:"last_error,omitempty"`
}

// stats reports the embedding worker; nil without a model.
func (m *embedder) stats() *EmbedStats {
	if !m.on() {
		return nil
	}
	m.mu.Lock()
	st := &EmbedStats{Model: m.enc.Name(), Dim: m.enc.Dim(), Memories: len(m.have), Backlog: len(m.pending) + int(m.busy.Load())}
	m.mu.Unlock()
	st.Vectors, st.Approximate = m.vec.Len(), m.vec.Approximate()
	st.Embedded, st.Failed = m.embedded.Load(), m.failed.Load()
	st.LastError, _ = m.lastErr.Load().(string)
	return st
}

func (m *embedder) take() []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []uint64
	for ino := range m.pending {
		out = append(out, ino)
		delete(m.pending, ino)
		if len(out) == embedBatch {
			break
		}
	}
	m.busy.Store(int64(len(out))) // under mu: the backlog never dips while a batch is taken
	return out
}

// run embeds pending memories until stopped.
func (m *embedder) run() {
	defer close(m.done)
	for {
		batch := m.take()
		if len(batch) == 0 {
			select {
			case <-m.stop:
				return
			case <-m.wake:
				continue
			}
		}
		select {
		case <-m.stop:
			return
		default:
		}
		m.embed(batch)
		m.busy.Store(0)
	}
}

type embedJob struct {
	ino    uint64
	sha    string
	chunks int
}

// embed encodes one batch and stores the vectors.
func (m *embedder) embed(batch []uint64) {
	var jobs []embedJob
	var texts []string
	for _, ino := range batch {
		in, err := m.src.Info(ino)
		if err != nil {
			if errors.Is(err, syscall.ENOENT) {
				m.remove(ino)
			}
			continue
		}
		m.mu.Lock()
		key := embedKey(m.src, in)
		done := m.have[ino] == key && key != ""
		m.mu.Unlock()
		if done {
			continue
		}
		buf := make([]byte, min(in.Size, embedReadMx))
		n, err := m.src.ReadAt(ino, buf, 0)
		var cs []string
		if err == nil && !isBinary(buf[:n]) {
			cs = chunkText(redactText(m.src, in.Path, indexText(in, string(buf[:n]))))
		}
		if len(cs) == 0 {
			// Nothing to embed now (emptied, binary, unreadable): the
			// old vectors must not keep finding it by what it said.
			m.remove(ino)
			continue
		}
		jobs = append(jobs, embedJob{ino, key, len(cs)})
		texts = append(texts, cs...)
	}
	if len(texts) == 0 {
		return
	}
	vecs, err := m.enc.Encode(texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("the encoder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		m.failed.Add(uint64(len(jobs)))
		m.lastErr.Store(err.Error())
		m.log.Printf("views: embedding %d memories: %v", len(jobs), err)
		return
	}
	at := 0
	for _, j := range jobs {
		vs := vecs[at : at+j.chunks]
		at += j.chunks
		m.mu.Lock()
		// Still there? A removal after this check finds the vectors.
		if _, err := m.src.Attr(j.ino); err == nil {
			if !m.src.ReadOnly() { // else kept in memory only
				err = m.src.PutVector(j.ino, encodeVectors(j.sha, vs))
			}
			if err == nil {
				err = m.vec.Put(j.ino, vs)
			}
			if err == nil {
				m.have[j.ino] = j.sha
				m.embedded.Add(1)
			} else {
				m.failed.Add(1)
				m.lastErr.Store(err.Error())
			}
		}
		m.mu.Unlock()
	}
}
