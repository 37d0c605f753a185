package backup

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Record is one record of a backup: a key and its value, or a blob file's
// content (Content, to read before the next call of Next).
type Record struct {
	Blob       bool
	Key, Value []byte
	Ino, Gen   uint64
	Size       int64
	Content    io.Reader
}

// Reader reads a backup.
type Reader struct {
	Header Header
	src    *bufio.Reader // after the header
	zr     *zstd.Decoder
	body   *bufio.Reader // the decompressed records
	in     *hashed       // body, hashed as it is consumed
	keys   int64
	blobs  int64
	left   io.Reader // the unread content of the last blob
}

// hashed reads from a bufio.Reader, hashing the bytes it hands out (not
// those buffered ahead).
type hashed struct {
	r   *bufio.Reader
	sum hash.Hash
}

func (h *hashed) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.sum.Write(p[:n])
	return n, err
}

func (h *hashed) ReadByte() (byte, error) {
	b, err := h.r.ReadByte()
	if err == nil {
		h.sum.Write([]byte{b})
	}
	return b, err
}

// Open reads the magic and the header of the backup in r. The body is
// read by Next, once Unlock gave an encrypted backup its key.
func Open(r io.Reader) (*Reader, error) {
	src := bufio.NewReaderSize(r, 256<<10)
	m := make([]byte, len(magic))
	if _, err := io.ReadFull(src, m); err != nil || string(m) != magic {
		return nil, errors.New("backup: not a mnemofs backup (no MNEMOFS-BACKUP header)")
	}
	line, err := src.ReadBytes('\n')
	if err != nil {
		return nil, ErrCorrupt
	}
	rd := &Reader{src: src}
	if err := json.Unmarshal(line, &rd.Header); err != nil {
		return nil, ErrCorrupt
	}
	if rd.Header.Format != Format {
		return nil, fmt.Errorf("backup: the file is of backup format %d, and this mnemofs reads format %d: restore it with the mnemofs that wrote it (%s) or a newer one", rd.Header.Format, Format, rd.Header.Mnemofs)
	}
	if !rd.Header.Encrypted {
		err = rd.start(src)
	}
	return rd, err
}

// Unlock gives an encrypted backup the store's 32-byte key.
func (r *Reader) Unlock(key []byte) error {
	if !r.Header.Encrypted || r.zr != nil {
		return nil
	}
	aead, err := frameKey(key, r.Header.Salt)
	if err != nil {
		return err
	}
	return r.start(&opener{r: r.src, aead: aead})
}

func (r *Reader) start(body io.Reader) error {
	zr, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return err
	}
	r.zr = zr
	r.body = bufio.NewReaderSize(zr, 256<<10)
	r.in = &hashed{r: r.body, sum: sha256.New()}
	return nil
}

// Close releases the decompressor.
func (r *Reader) Close() {
	if r.zr != nil {
		r.zr.Close()
	}
}

// corrupt turns a read error into ErrCorrupt, but for a wrong key.
func corrupt(err error) error {
	if errors.Is(err, ErrKey) {
		return ErrKey
	}
	return ErrCorrupt
}

// maxKey bounds a key or value's length (etcd's request limit is far
// below it): a larger one is a damaged file, not an allocation to make.
const maxKey = 1 << 30

// bytes reads a uvarint length and that many bytes.
func (r *Reader) bytes() ([]byte, error) {
	n, err := binary.ReadUvarint(r.in)
	if err != nil || n > maxKey {
		return nil, corrupt(err)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.in, b); err != nil {
		return nil, corrupt(err)
	}
	return b, nil
}

// Next returns the next record, or io.EOF once the end record's counts
// and hash checked out (ErrCorrupt otherwise).
func (r *Reader) Next() (Record, error) {
	if r.zr == nil {
		return Record{}, errors.New("backup: the backup is encrypted: give the store's key")
	}
	if r.left != nil {
		if _, err := io.Copy(io.Discard, r.left); err != nil {
			return Record{}, corrupt(err)
		}
		r.left = nil
	}
	kind, err := r.in.ReadByte()
	if err != nil {
		return Record{}, corrupt(err)
	}
	switch kind {
	case kindKey:
		k, err := r.bytes()
		if err != nil {
			return Record{}, err
		}
		v, err := r.bytes()
		if err != nil {
			return Record{}, err
		}
		r.keys++
		return Record{Key: k, Value: v}, nil
	case kindBlob:
		var v [3]uint64
		for i := range v {
			if v[i], err = binary.ReadUvarint(r.in); err != nil {
				return Record{}, corrupt(err)
			}
		}
		r.blobs++
		r.left = &exact{r: io.LimitReader(r.in, int64(v[2])), n: int64(v[2])}
		return Record{Blob: true, Ino: v[0], Gen: v[1], Size: int64(v[2]), Content: r.left}, nil
	case kindEnd:
		keys, err1 := binary.ReadUvarint(r.in)
		blobs, err2 := binary.ReadUvarint(r.in)
		if err := errors.Join(err1, err2); err != nil {
			return Record{}, corrupt(err)
		}
		want := r.in.sum.Sum(nil)
		got := make([]byte, sha256.Size)
		if _, err := io.ReadFull(r.body, got); err != nil {
			return Record{}, corrupt(err)
		}
		if !bytes.Equal(got, want) || keys != uint64(r.keys) || blobs != uint64(r.blobs) {
			return Record{}, ErrCorrupt
		}
		if _, err := r.body.ReadByte(); err != io.EOF {
			return Record{}, corrupt(err) // more after the end, or a bad last frame
		}
		return Record{}, io.EOF
	}
	return Record{}, ErrCorrupt
}

// exact is a blob's content: a short read is a damaged file.
type exact struct {
	r io.Reader
	n int64
}

func (e *exact) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.n -= int64(n)
	if err == io.EOF && e.n > 0 {
		return n, ErrCorrupt
	}
	if err != nil && err != io.EOF {
		err = corrupt(err)
	}
	return n, err
}
