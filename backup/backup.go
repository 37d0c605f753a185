package backup

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Format is the version of the file this package writes and reads.
const Format = 1

const magic = "MNEMOFS-BACKUP\n"

// Header describes a backup; it is stored in the clear.
type Header struct {
	Format      int       `json:"format"`
	StoreFormat int       `json:"store_format"` // store.Format of the store dumped
	Created     time.Time `json:"created"`
	Mnemofs     string    `json:"mnemofs"` // the version that wrote it
	Source      string    `json:"source"`  // the data directory or the etcd URL
	Encrypted   bool      `json:"encrypted"`
	// KDF is how the store's key is derived from what the user holds (the
	// content of DATA/kdf.json; absent for a store encrypted before it
	// existed): a restore writes it back beside the store.
	KDF  json.RawMessage `json:"kdf,omitempty"`
	Salt []byte          `json:"salt,omitempty"` // of the frame key
}

// ErrCorrupt is a backup that is cut short, changed, or not one at all.
var ErrCorrupt = errors.New("backup: the file is damaged or incomplete")

const (
	kindKey  = 'k'
	kindBlob = 'b'
	kindEnd  = 'e'
)

// Writer writes a backup.
type Writer struct {
	seal  *sealer // nil: not encrypted
	zw    *zstd.Encoder
	bw    *bufio.Writer
	sum   hash.Hash
	keys  int64
	blobs int64
	buf   []byte
}

// NewWriter writes the magic and h to w and returns the Writer of the
// body. key is the store's 32-byte key when h.Encrypted (a salt is made).
func NewWriter(w io.Writer, h Header, key []byte) (*Writer, error) {
	h.Format = Format
	bw := &Writer{sum: sha256.New()}
	var body io.Writer = w
	if h.Encrypted {
		s, salt, err := newSealer(w, key)
		if err != nil {
			return nil, err
		}
		h.Salt, bw.seal, body = salt, s, s
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(w, magic+string(hb)+"\n"); err != nil {
		return nil, err
	}
	if bw.zw, err = zstd.NewWriter(body, zstd.WithEncoderLevel(zstd.SpeedDefault)); err != nil {
		return nil, err
	}
	bw.bw = bufio.NewWriterSize(io.MultiWriter(bw.zw, bw.sum), 256<<10)
	return bw, nil
}

func (w *Writer) uvarints(kind byte, v ...uint64) error {
	w.buf = append(w.buf[:0], kind)
	for _, x := range v {
		w.buf = binary.AppendUvarint(w.buf, x)
	}
	_, err := w.bw.Write(w.buf)
	return err
}

// Key writes one key and value.
func (w *Writer) Key(k, v []byte) error {
	w.buf = append(w.buf[:0], kindKey)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(k)))
	w.buf = append(w.buf, k...)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(v)))
	if _, err := w.bw.Write(w.buf); err != nil {
		return err
	}
	w.keys++
	_, err := w.bw.Write(v)
	return err
}

// Blob writes size bytes of r as the content of generation gen of ino's
// blob file.
func (w *Writer) Blob(ino, gen uint64, size int64, r io.Reader) error {
	if err := w.uvarints(kindBlob, ino, gen, uint64(size)); err != nil {
		return err
	}
	n, err := io.CopyN(w.bw, r, size)
	if err != nil {
		return fmt.Errorf("backup: the blob file of inode %d: %d of %d bytes: %w", ino, n, size, err)
	}
	w.blobs++
	return nil
}

// Counts is how many keys and blobs were written.
func (w *Writer) Counts() (keys, blobs int64) { return w.keys, w.blobs }

// Close writes the end record and finishes the body. The backup is
// complete only when Close returned nil.
func (w *Writer) Close() error {
	if err := w.uvarints(kindEnd, uint64(w.keys), uint64(w.blobs)); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if _, err := w.zw.Write(w.sum.Sum(nil)); err != nil {
		return err
	}
	if err := w.zw.Close(); err != nil {
		return err
	}
	if w.seal != nil {
		return w.seal.Close()
	}
	return nil
}
