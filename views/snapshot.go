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
// all: encoded and decoded a chunk at a time, never all at once), zeros
// up to a multiple of segAlign, the index as a segment
// (search.Image.WriteSegment), then the segment's offset (8 bytes) and the
// CRC-32C of every byte before it (4 bytes), both big-endian. It is
// written to a temporary file, synced and renamed over the old one, so a
// crash leaves the old snapshot or the new one, never a mix; a file whose
// checksum, format, program or store does not match is not used (the
// index is built from the store instead).
//
// The segment is not read into memory: once the whole file's checksum is
// checked (read through the page cache), it is mapped read-only and the
// index uses it where it lies (search.Index.LoadSegment), so its term
// dictionary and posting lists are paged in as queries need them and
// count in the mount's memory only while they are resident. The mapping
// lives as long as the process (the index loaded from it may be in use
// at any time); a newer snapshot renamed over the file does not change
// it, and the old file's blocks are freed when the mount stops.

// snapFormat is the layout's version; a change of layout or of what is
// indexed bumps it. (The program's own checksum is in the header too, so
// a build that indexes differently never reads an older build's file.)
const snapFormat = 3

// segAlign is the segment's alignment in the file: a mapping starts at a
// multiple of the page size (at most 64 KiB on the hosts Go supports).
const segAlign = 64 << 10

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
	cw := &countWriter{w: io.MultiWriter(tmp, crc)}
	bw := bufio.NewWriterSize(cw, 1<<20)
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
		err = bw.Flush()
	}
	segOff := (cw.n + segAlign - 1) / segAlign * segAlign
	if err == nil {
		_, err = cw.Write(make([]byte, segOff-cw.n))
	}
	if err == nil {
		err = im.idx.WriteSegment(cw)
	}
	if err == nil {
		_, err = cw.Write(binary.BigEndian.AppendUint64(nil, uint64(segOff)))
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

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
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
	f      *os.File
	crc    hash.Hash32
	rest   *io.LimitedReader // the gob part, read through crc
	segOff int64
	segEnd int64 // where the segment ends: the trailer follows
	want   uint32
	dec    *gob.Decoder
	head   snapHeader
}

var errSnapCorrupt = errors.New("the checksum does not match")

func openSnap(path string) (*snapReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := &snapReader{f: f, crc: crc32.New(castagnoli)}
	if err := r.trailer(); err != nil {
		f.Close()
		return nil, err
	}
	r.rest = &io.LimitedReader{R: f, N: r.segOff}
	r.dec = gob.NewDecoder(bufio.NewReaderSize(io.TeeReader(r.rest, r.crc), 1<<20))
	if err := r.dec.Decode(&r.head); err != nil {
		f.Close()
		return nil, fmt.Errorf("reading its header: %w", err)
	}
	return r, nil
}

// trailer reads where the segment is and the checksum.
func (r *snapReader) trailer() error {
	fi, err := r.f.Stat()
	if err != nil {
		return err
	}
	var tail [12]byte
	if fi.Size() < int64(len(tail)) {
		return errSnapCorrupt
	}
	if _, err := r.f.ReadAt(tail[:], fi.Size()-12); err != nil {
		return err
	}
	r.segOff, r.segEnd = int64(binary.BigEndian.Uint64(tail[:8])), fi.Size()-12
	r.want = binary.BigEndian.Uint32(tail[8:])
	if r.segOff < 0 || r.segOff%segAlign != 0 || r.segOff > r.segEnd {
		return errors.New("its trailer does not hold: an older format, or damaged")
	}
	return nil
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

// index checks the checksum of the whole file, then maps the segment and
// loads idx from it; on an error nothing read must be used.
func (r *snapReader) index(idx *search.Index) error {
	// What the decoder's buffer has not taken of the gob part is read
	// through the checksum too, then the segment and its offset.
	if _, err := io.Copy(io.Discard, io.TeeReader(r.rest, r.crc)); err != nil {
		return err
	}
	if _, err := io.Copy(r.crc, io.NewSectionReader(r.f, r.segOff, r.segEnd+8-r.segOff)); err != nil {
		return err
	}
	if r.crc.Sum32() != r.want {
		return errSnapCorrupt
	}
	seg, err := mapSegment(r.f, r.segOff, r.segEnd-r.segOff)
	if err != nil {
		return fmt.Errorf("mapping its index: %w", err)
	}
	if err := idx.LoadSegment(seg); err != nil {
		return fmt.Errorf("reading its index: %w", err)
	}
	// What the load read (the documents' columns) leaves the process's
	// memory; the page cache keeps it, and a query pages in what it reads.
	dropResident(seg)
	return nil
}

func (r *snapReader) close() { r.f.Close() }
