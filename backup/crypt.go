package backup

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// frameSize is the plaintext of a full frame.
const frameSize = 64 << 10

// frameKey is the key of a backup's frames: the store key, made unique
// to the backup by its salt, so that frame numbers never repeat a nonce
// under one key.
func frameKey(key, salt []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("backup: the key is %d bytes, not 32", len(key))
	}
	k, err := hkdf.Key(sha256.New, key, salt, "mnemofs backup", 32)
	if err != nil {
		return nil, err
	}
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

func nonce(aead cipher.AEAD, n uint64) []byte {
	b := make([]byte, aead.NonceSize())
	binary.BigEndian.PutUint64(b[len(b)-8:], n)
	return b
}

// sealer encrypts what is written to it in frames.
type sealer struct {
	w    io.Writer
	aead cipher.AEAD
	n    uint64
	buf  []byte
}

func newSealer(w io.Writer, key []byte) (*sealer, []byte, error) {
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, nil, err
	}
	aead, err := frameKey(key, salt)
	if err != nil {
		return nil, nil, err
	}
	return &sealer{w: w, aead: aead}, salt, nil
}

func (s *sealer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		take := min(frameSize-len(s.buf), len(p))
		s.buf = append(s.buf, p[:take]...)
		p = p[take:]
		if len(s.buf) == frameSize {
			if err := s.frame(0); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (s *sealer) frame(last byte) error {
	out := s.aead.Seal(nil, nonce(s.aead, s.n), s.buf, []byte{last})
	s.n++
	s.buf = s.buf[:0]
	var h [5]byte
	h[0] = last
	binary.BigEndian.PutUint32(h[1:], uint32(len(out)))
	if _, err := s.w.Write(h[:]); err != nil {
		return err
	}
	_, err := s.w.Write(out)
	return err
}

// Close writes the last frame (possibly empty).
func (s *sealer) Close() error { return s.frame(1) }

// opener decrypts frames; it returns io.EOF only after the last one.
type opener struct {
	r    io.Reader
	aead cipher.AEAD
	n    uint64
	buf  []byte
	done bool
}

// ErrKey is a key that does not open an encrypted backup.
var ErrKey = errors.New("backup: the key does not open this backup")

func (o *opener) Read(p []byte) (int, error) {
	for len(o.buf) == 0 {
		if o.done {
			if n, _ := o.r.Read(make([]byte, 1)); n > 0 {
				return 0, ErrCorrupt // bytes after the last frame
			}
			return 0, io.EOF
		}
		var h [5]byte
		if _, err := io.ReadFull(o.r, h[:]); err != nil {
			return 0, ErrCorrupt
		}
		size := binary.BigEndian.Uint32(h[1:])
		if h[0] > 1 || size > frameSize+uint32(o.aead.Overhead()) {
			return 0, ErrCorrupt
		}
		ct := make([]byte, size)
		if _, err := io.ReadFull(o.r, ct); err != nil {
			return 0, ErrCorrupt
		}
		pt, err := o.aead.Open(ct[:0], nonce(o.aead, o.n), ct, h[:1])
		if err != nil {
			if o.n == 0 {
				return 0, ErrKey
			}
			return 0, ErrCorrupt
		}
		o.n++
		o.buf, o.done = pt, h[0] == 1
	}
	n := copy(p, o.buf)
	o.buf = o.buf[n:]
	return n, nil
}
