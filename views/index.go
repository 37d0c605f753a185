package views

import (
	"errors"
	"syscall"
	"unsafe"

	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// refresh re-reads one memory; content is re-indexed only when it changed.
func (ix *indexer) refresh(ino uint64, content bool) {
	in, err := ix.src.Info(ino)
	if err != nil {
		if ix.unavailable(ino, err) {
			return
		}
		if errors.Is(err, syscall.ENOENT) {
			ix.drop(ino)
		}
		return
	}
	a, err := ix.src.Attr(ino)
	if ix.unavailable(ino, err) {
		return
	}
	if err != nil {
		return
	}
	ix.indexMemory(in, a, content, nil, nil)
}

// indexMemory brings the memory with Info in and inode a up to date; content
// says its text changed, and text is that text when it was read already
// (nil: it is read here); pr, when not nil, is what prepare made of it.
func (ix *indexer) indexMemory(in store.Info, a store.Inode, content bool, text []byte, pr *prepared) {
	ino := in.Ino
	if !a.IsReg() || len(a.Links) == 0 {
		if a.IsReg() {
			ix.drop(ino) // unlinked meanwhile
		}
		return // else a directory moved: paths are computed when needed
	}
	if in.Ignored {
		ix.drop(ino) // not a memory (the policy's ignore rules)
		return
	}
	parent, name := a.Links[0].Parent, a.Links[0].Name
	ent := &Entry{Ino: ino, Users: in.Users, Type: in.Type, Tags: in.Tags, Created: in.Created,
		Modified: in.Modified, parent: parent, name: name, ctime: a.Ctime, size: a.Size}
	hidden := ix.cat.hiddenAt(parent, name)
	if isLog(name) {
		parent = 0 // a log's lines are a sequence of their own
	}
	if content || !ix.cat.has(ino) {
		if pr == nil {
			pr = ix.prepare(in, a, text)
		}
		if errors.Is(pr.err, syscall.ENOENT) {
			ix.drop(ino) // removed while being read; its Removed event follows
			return
		}
		if ix.unavailable(ino, pr.err) {
			return // kept as it was; again when the backend answers
		}
		if pr.err != nil {
			ix.log.Printf("views: indexing %s: %v", in.Path, pr.err)
		}
		ent.nextLine, ent.indexedSize = pr.next, pr.size
		ix.red.set(ino, pr.red)
		if isLog(name) {
			ent.setLog((*logLines)(nil).extend(pr.metas))
		}
		ix.idx.PutAnalyzed(ino, pr.an, parent, name)
		ix.emb.enqueue(ino)
	} else {
		if old := ix.cat.entry(ino); old != nil {
			ent.nextLine, ent.indexedSize = old.nextLine, old.indexedSize
			if old.log != nil {
				ent.setLog(old.log)
			}
		}
		if parent != 0 {
			ix.idx.Move(ino, parent, name)
		}
	}
	ix.cat.put(ent, hidden)
}

// prepared is what indexing a memory makes of its content alone: its
// parts, what redaction hid in them, and their index terms. The build
// makes it on a goroutine of its own (prepareScanned), ahead of the one
// that adds it to the catalog and the index.
type prepared struct {
	parts []search.Part
	metas []LineMeta
	next  uint32
	size  uint64
	err   error
	red   map[string]int
	an    *search.Analyzed
}

// prepare reads (when text is nil) and analyses the content of a regular
// file with Info in and inode a.
func (ix *indexer) prepare(in store.Info, a store.Inode, text []byte) *prepared {
	pr := &prepared{}
	pr.parts, pr.metas, pr.next, pr.size, pr.err = ix.parts(in.Ino, a.Links[0].Name, a.Size, in, text)
	pr.red = redactParts(ix.src, in.Path, pr.parts)
	pr.an = search.Analyze(pr.parts)
	return pr
}

func (ix *indexer) drop(ino uint64) {
	ix.idx.Remove(ino)
	ix.red.set(ino, nil)
	ix.emb.remove(ino)
	ix.cat.remove(ino)
}

// parts splits a file into indexed documents: one per line for logs, else
// the whole text, read here unless read holds it (the caller's, not
// written again). For logs it also returns the number of the line after
// the last newline and the bytes indexed (0, 0 when the log was too big to
// index whole, so that appends re-read it).
func (ix *indexer) parts(ino uint64, name string, size uint64, in store.Info, read []byte) ([]search.Part, []LineMeta, uint32, uint64, error) {
	buf, n := read, len(read)
	if read == nil {
		buf = make([]byte, min(size, indexMax))
		var err error
		if n, err = ix.src.ReadAt(ino, buf, 0); err != nil {
			return nil, nil, 0, 0, err
		}
	}
	if isBinary(buf[:n]) {
		return nil, nil, 0, 0, nil // nothing to search in an image or an archive
	}
	// buf is this call's and is not written again: the text is read
	// where it lies, not copied (a copy was a gigabyte of a 1M build).
	text := unsafe.String(unsafe.SliceData(buf), n)
	if isLog(name) {
		parts, metas, lines := logParts(text, 1, 0)
		if size > indexMax {
			return parts, metas, 0, 0, nil
		}
		return parts, metas, lines, uint64(n), nil
	}
	meta := metaText(in)
	head, body := indexHead(in, meta, text)
	return []search.Part{{Head: head, Text: body, Meta: meta}}, nil, 0, 0, nil
}
