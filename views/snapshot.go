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
	"maps"
	"os"
	"path/filepath"
	"slices"
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
// Layout: gob of snapHeader, then gob of the catalog's maps and facets
// (snapCatalog); then, each at a multiple of segAlign, the catalog's
// entries as a segment (catbase.go) and the index as a segment
// (search.Image.WriteSegment); then where the catalog's segment starts
// and ends and where the index's starts (8 bytes each) and the CRC-32C of
// every byte before it (4 bytes), all big-endian. It is
// written to a temporary file, synced and renamed over the old one, so a
// crash leaves the old snapshot or the new one, never a mix; a file whose
// checksum, format, program or store does not match is not used (the
// index is built from the store instead).
//
// The segments are not read into memory: once the whole file's checksum
// is checked (read through the page cache), they are mapped read-only and
// used where they lie (catalog.base, search.Index.LoadSegment), so an
// entry, a term's dictionary entry and its posting list are paged in as
// they are asked for and count in the mount's memory only while they are
// resident. The mapping
// lives as long as the process (the index loaded from it may be in use
// at any time); a newer snapshot renamed over the file does not change
// it, and the old file's blocks are freed when the mount stops.

// snapFormat is the layout's version; a change of layout or of what is
// indexed bumps it. (The program's own checksum is in the header too, so
// a build that indexes differently never reads an older build's file.)
const snapFormat = 4

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

type snapCatalog struct {
	Redact map[uint64]map[string]int
	Dirs   map[uint64]store.Link // snapMark.Dirs
	Hidden []uint64              // the memories left out of the listings
	// Facets: each field's values, the memories carrying each (a
	// roaring64 bitmap) and how many of them are shown.
	Facets [nFields]map[string]facetImage
}

type facetImage struct {
	Bits  []byte
	Shown int
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
	head snapHeader
	cat  snapCatalog
	base *catBase          // the catalog's base when captured (nil: none)
	over map[uint64]*Entry // and what was put (nil: removed) since
	muts uint64            // the catalog's count of changes when captured
	idx  *search.Image
}

// catalog writes the catalog's segment: the base's records and the
// entries put since, in inode order.
func (im *snapImage) catalog(out io.Writer) error {
	w := newCatWriter(im.base)
	keys := slices.Sorted(maps.Keys(im.over))
	var base []uint64
	if im.base != nil {
		base = im.base.inos
	}
	for i, j := 0, 0; i < len(base) || j < len(keys); {
		switch {
		case j == len(keys) || i < len(base) && base[i] < keys[j]:
			w.add(nil, i)
			i++
		default:
			if i < len(base) && base[i] == keys[j] {
				i++ // over's shadows the base's
			}
			if ent := im.over[keys[j]]; ent != nil {
				w.add(ent, 0)
			}
			j++
		}
	}
	if len(w.inos) != im.head.Entries {
		return fmt.Errorf("the catalog holds %d entries, %d written", im.head.Entries, len(w.inos))
	}
	return w.writeTo(out)
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
	// align pads the file to the next multiple of segAlign.
	align := func() int64 {
		if err == nil {
			err = bw.Flush()
		}
		off := (cw.n + segAlign - 1) / segAlign * segAlign
		if err == nil {
			_, err = cw.Write(make([]byte, off-cw.n))
		}
		return off
	}
	catOff := align()
	if err == nil {
		err = im.catalog(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	catEnd := cw.n
	segOff := align()
	if err == nil {
		err = im.idx.WriteSegment(cw)
	}
	if err == nil {
		var t []byte
		for _, v := range []int64{catOff, catEnd, segOff} {
			t = binary.BigEndian.AppendUint64(t, uint64(v))
		}
		_, err = cw.Write(t)
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
// the catalog's maps (catalog), then its segments (segments), checking
// the checksum of the whole file before they are used.
type snapReader struct {
	f                      *os.File
	crc                    hash.Hash32
	rest                   *io.LimitedReader // the gob part, read through crc
	catOff, catEnd, segOff int64
	end                    int64 // where the segments end: the trailer follows
	want                   uint32
	dec                    *gob.Decoder
	head                   snapHeader
}

var errSnapCorrupt = errors.New("the checksum does not match")

// trailerSize: three offsets and the checksum.
const trailerSize = 3*8 + 4

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
	r.rest = &io.LimitedReader{R: f, N: r.catOff}
	r.dec = gob.NewDecoder(bufio.NewReaderSize(io.TeeReader(r.rest, r.crc), 1<<20))
	if err := r.dec.Decode(&r.head); err != nil {
		f.Close()
		return nil, fmt.Errorf("reading its header: %w", err)
	}
	return r, nil
}

// trailer reads where the segments are and the checksum.
func (r *snapReader) trailer() error {
	fi, err := r.f.Stat()
	if err != nil {
		return err
	}
	var tail [trailerSize]byte
	if fi.Size() < trailerSize {
		return errSnapCorrupt
	}
	if _, err := r.f.ReadAt(tail[:], fi.Size()-trailerSize); err != nil {
		return err
	}
	be := binary.BigEndian
	r.catOff, r.catEnd, r.segOff = int64(be.Uint64(tail[:])), int64(be.Uint64(tail[8:])), int64(be.Uint64(tail[16:]))
	r.end, r.want = fi.Size()-trailerSize, be.Uint32(tail[24:])
	if r.catOff < 0 || r.catOff%segAlign != 0 || r.catEnd < r.catOff || r.segOff < r.catEnd || r.segOff%segAlign != 0 || r.segOff > r.end {
		return errors.New("its trailer does not hold: an older format, or damaged")
	}
	return nil
}

// catalog decodes the catalog's maps into cat.
func (r *snapReader) catalog(cat *snapCatalog) error {
	if err := r.dec.Decode(cat); err != nil {
		return fmt.Errorf("reading its catalog: %w", err)
	}
	return nil
}

// segments checks the checksum of the whole file, then maps the
// catalog's and the index's segments; on an error nothing read must be
// used.
func (r *snapReader) segments() (cat, idx []byte, err error) {
	// What the decoder's buffer has not taken of the gob part is read
	// through the checksum too, then the segments and the offsets.
	if _, err := io.Copy(io.Discard, io.TeeReader(r.rest, r.crc)); err != nil {
		return nil, nil, err
	}
	if _, err := io.Copy(r.crc, io.NewSectionReader(r.f, r.catOff, r.end+trailerSize-4-r.catOff)); err != nil {
		return nil, nil, err
	}
	if r.crc.Sum32() != r.want {
		return nil, nil, errSnapCorrupt
	}
	m, err := mapSegment(r.f, r.catOff, r.end-r.catOff)
	if err != nil {
		return nil, nil, fmt.Errorf("mapping it: %w", err)
	}
	return m[:r.catEnd-r.catOff], m[r.segOff-r.catOff:], nil
}

func (r *snapReader) close() { r.f.Close() }
