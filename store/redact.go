package store

// Redaction (meta/policy.yaml redact:, package redact). Index-mode rules
// are the views' business: the store keeps the bytes and only hands out
// the compiled rules (Redactor). Store-mode rules mask a file's bytes
// before they are stored, in the commit (maskForStore):
//
//   - a file a store-mode rule covers is never given a blob file or a
//     passthrough session while it is written (write, Passthrough), so
//     its bytes stay in the open state's dirty chunks, in memory;
//   - its dirty chunks are never spilled to the KV ahead of the commit
//     (write), so nothing reaches Badger (and its value log) unmasked;
//   - at the commit, before any KV write, the whole content is read,
//     masked, and written back into the dirty chunks; the size changes
//     by what the markers add or take (the kernel is told, Notify).
//
// Content that was stored before a rule covered it (written before the
// policy changed, or renamed in from another tree, or in a blob file) is
// not rewritten: the rule applies to what is written from then on.

// storeMasked reports whether a store-mode rule covers the file ino.
func (s *Store) storeMasked(ino uint64) bool {
	r := s.Redactor().ForStore()
	if r.Empty() {
		return false
	}
	p, err := s.Path(ino)
	return err == nil && r.Applies(p)
}

// maxMasked bounds a store-masked file: it is held in memory until its
// commit.
const maxMasked = 64 << 20

// maskLocked applies the store-mode rules to f's uncommitted content
// before the commit writes anything: the changed part (from the chunk
// where an append began, else the whole file) is read through f, masked,
// and put back as dirty chunks. It reports whether anything was masked.
// Caller holds f.mu.
func (s *Store) maskLocked(f *openFile) (bool, error) {
	if !f.masked || !f.modified || f.blob != nil {
		return false, nil
	}
	r := s.Redactor().ForStore()
	p, err := s.Path(f.ino)
	if err != nil || !r.Applies(p) {
		return false, nil
	}
	i, err := s.inode(f.ino)
	if err != nil {
		return false, err
	}
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	from := uint64(0)
	if f.appendOnly {
		from = f.committedSize / ChunkSize * ChunkSize
	}
	if size <= from {
		return false, nil
	}
	buf := make([]byte, size-from)
	n, err := s.readLocked(f.ino, f, buf, from)
	if err != nil {
		return false, err
	}
	out, counts := r.Redact(p, buf[:n])
	if counts == nil {
		return false, nil
	}
	d := 0
	for d < len(out) && d < n && out[d] == buf[d] {
		d++
	}
	if from+uint64(d) < f.committedSize {
		f.appendOnly = false // a match reached into committed bytes
	}
	first := uint32(from / ChunkSize)
	for k := range f.dirty {
		if k >= first {
			delete(f.dirty, k)
			f.dirtyBytes -= ChunkSize
		}
	}
	if f.dirty == nil {
		f.dirty = map[uint32][]byte{}
	}
	for off := 0; off < len(out); off += ChunkSize {
		f.dirty[first+uint32(off/ChunkSize)] = append([]byte(nil), out[off:min(off+ChunkSize, len(out))]...)
		f.dirtyBytes += ChunkSize
	}
	newSize := from + uint64(len(out))
	if newSize < size {
		f.truncFloor = min(f.truncFloor, (newSize+ChunkSize-1)/ChunkSize*ChunkSize)
	}
	f.hash, f.hashTried = nil, true
	s.setSize(i, newSize, false)
	s.rules.Masked(counts)
	return true, nil
}

// warnUnmasked logs, once per inode, that a file a store-mode rule covers
// keeps its content in a blob file (stored before the rule covered it),
// so what is written to it is not masked. The line names the inode and
// the fix, never content.
func (s *Store) warnUnmasked(ino uint64) {
	if _, dup := s.redWarned.LoadOrStore(ino, true); dup {
		return
	}
	s.log.Printf("inode %d is covered by a store-mode redaction rule but its content is in a blob file, stored before the rule: writes to it are not masked; copy it to a new file and rename that over it to store it masked", ino)
}
