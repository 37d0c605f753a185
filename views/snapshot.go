package views

import (
	"bufio"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// The snapshot file: the catalog and the lexical index as of a version of
// the store, so that a mount starts from it instead of reading every
// memory again (persist.go decides when it is written and how it is
// brought up to date). It is derived data, rebuildable at any time, in the
// data directory beside the KV: index/views.snap (index/views-<user
// hex>.snap for a --user mount).
//
// Layout: gob of snapHeader, then gob of the catalog's maps (snapCatalog),
// then its entries in chunks of snapChunk ([]entryImage each, Entries in
// all: encoded and decoded a chunk at a time, never all at once), then
// gob of the index (search.Image), then the CRC-32C of every byte before
// it (4 bytes, big-endian). It is written to a temporary file, synced and
// renamed over the old one, so a crash leaves the old snapshot or the new
// one, never a mix; a file whose checksum, format, program or store does
// not match is not used (the index is built from the store instead).

// snapFormat is the layout's version; a change of layout or of what is
// indexed bumps it. (The program's own checksum is in the header too, so
// a build that indexes differently never reads an older build's file.)
const snapFormat = 2

type snapHeader struct {
	Format  int
	Program string // programID: size and CRC-32C of the executable
	Store   string // store.ID
	User    string // the store's user ("" for none)
	Version uint64 // store.Settled: every change at or below it is in
	Written time.Time
	Entries int
}

// snapChunk is how many entries one gob value of the catalog holds.
const snapChunk = 4096

type snapCatalog struct {
	Redact map[uint64]map[string]int
	Dirs   map[uint64]store.Link // snapMark.Dirs
	// Sizes: how many memories carry each value of each field, so that
	// a load makes each set at its size at once (presize).
	Sizes [nFields]map[string]int
}

type entryImage struct {
	Ino               uint64
	Users, Tags       []string
	Type              string
	Created, Modified time.Time
	NextLine          uint32
	IndexedSize       uint64
	Parent            uint64
	Name              string
	Ctime             int64
	Size              uint64
	Hidden, IsLog     bool
	Lines             []lineImage
}

type lineImage struct {
	Line    uint32
	Users   []string
	Speaker string
	Created time.Time
	Tags    []string
	Off     uint64
	Size    uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// programID identifies the running executable, so that a snapshot is only
// read by the program that wrote it. Computed once.
var programID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(exe)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%d:%08x", n, h.Sum32())
})

// snapImage is what a snapshot holds, captured in memory (persist.go).
type snapImage struct {
	head   snapHeader
	cat    snapCatalog
	ents   []*Entry // sorted by inode
	hidden map[uint64]bool
	idx    *search.Image
}

// writeSnap writes im to path, replacing what was there. It returns the
// file's size.
func writeSnap(path string, im *snapImage) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing there
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(tmp, crc), 1<<20)
	enc := gob.NewEncoder(bw)
	err = enc.Encode(&im.head)
	if err == nil {
		err = enc.Encode(&im.cat)
	}
	chunk := make([]entryImage, 0, snapChunk)
	for i := 0; i < len(im.ents) && err == nil; i += snapChunk {
		chunk = chunk[:0]
		for _, ent := range im.ents[i:min(i+snapChunk, len(im.ents))] {
			chunk = append(chunk, imageOf(ent, im.hidden[ent.Ino]))
		}
		err = enc.Encode(chunk)
	}
	if err == nil {
		err = im.idx.Encode(enc)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		_, err = tmp.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	}
	if err == nil {
		err = tmp.Sync()
	}
	var size int64
	if fi, serr := tmp.Stat(); serr == nil {
		size = fi.Size()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	return size, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// snapReader reads a snapshot file: the header first (openSnap), then
// the catalog and the index, checking the checksum at the end.
type snapReader struct {
	f    *os.File
	crc  hash.Hash32
	rest *io.LimitedReader
	dec  *gob.Decoder
	head snapHeader
}

var errSnapCorrupt = errors.New("the checksum does not match")

func openSnap(path string) (*snapReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() < 4 {
		f.Close()
		if err == nil {
			err = errSnapCorrupt
		}
		return nil, err
	}
	r := &snapReader{f: f, crc: crc32.New(castagnoli)}
	r.rest = &io.LimitedReader{R: f, N: fi.Size() - 4}
	r.dec = gob.NewDecoder(bufio.NewReaderSize(io.TeeReader(r.rest, r.crc), 1<<20))
	if err := r.dec.Decode(&r.head); err != nil {
		f.Close()
		return nil, fmt.Errorf("reading its header: %w", err)
	}
	return r, nil
}

// catalog decodes the catalog's maps into cat, then its entries a chunk
// at a time, handing each to put (which may keep it).
func (r *snapReader) catalog(cat *snapCatalog, put func([]entryImage)) error {
	if err := r.dec.Decode(cat); err != nil {
		return fmt.Errorf("reading its catalog: %w", err)
	}
	for n := 0; n < r.head.Entries; {
		var chunk []entryImage
		if err := r.dec.Decode(&chunk); err != nil {
			return fmt.Errorf("reading its catalog: %w", err)
		}
		if len(chunk) == 0 || n+len(chunk) > r.head.Entries {
			return fmt.Errorf("reading its catalog: a chunk of %d entries after %d of %d", len(chunk), n, r.head.Entries)
		}
		n += len(chunk)
		put(chunk)
	}
	return nil
}

// index decodes the index into idx, then checks the checksum of the
// whole file; on an error nothing read must be used.
func (r *snapReader) index(idx *search.Index) error {
	if err := idx.Load(r.dec); err != nil {
		return fmt.Errorf("reading its index: %w", err)
	}
	// What the decoder's buffer has not taken yet is read through the
	// checksum too, then the checksum itself.
	if _, err := io.Copy(io.Discard, io.TeeReader(r.rest, r.crc)); err != nil {
		return err
	}
	var tail [4]byte
	if _, err := io.ReadFull(r.f, tail[:]); err != nil {
		return err
	}
	if binary.BigEndian.Uint32(tail[:]) != r.crc.Sum32() {
		return errSnapCorrupt
	}
	return nil
}

func (r *snapReader) close() { r.f.Close() }
