package backup

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

type item struct {
	k, v     string
	ino, gen uint64
	blob     []byte
}

func sample() []item {
	big := make([]byte, 300<<10) // several frames, incompressible
	rand.Read(big)
	return []item{
		{k: "i\x00\x00\x00\x00\x00\x00\x00\x01", v: "root"},
		{k: "sversion", v: "1"},
		{k: "empty", v: ""},
		{ino: 7, gen: 3, blob: big},
		{ino: 9, gen: 1, blob: []byte{}},
	}
}

func write(t *testing.T, items []item, key []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{StoreFormat: 1, Created: time.Now(), Source: "/data", Encrypted: key != nil}, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.blob != nil {
			err = w.Blob(it.ino, it.gen, int64(len(it.blob)), bytes.NewReader(it.blob))
		} else {
			err = w.Key([]byte(it.k), []byte(it.v))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads every record, reading blob contents only for every
// other blob (Next must skip the rest itself).
func readAll(b []byte, key []byte) ([]item, error) {
	r, err := Open(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if key != nil {
		if err := r.Unlock(key); err != nil {
			return nil, err
		}
	}
	var out []item
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if rec.Blob {
			c, err := io.ReadAll(rec.Content)
			if err != nil {
				return out, err
			}
			out = append(out, item{ino: rec.Ino, gen: rec.Gen, blob: c})
			continue
		}
		out = append(out, item{k: string(rec.Key), v: string(rec.Value)})
	}
}

func same(a, b []item) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d records, want %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.k != y.k || x.v != y.v || x.ino != y.ino || x.gen != y.gen || !bytes.Equal(x.blob, y.blob) || (x.blob == nil) != (y.blob == nil) {
			return fmt.Errorf("record %d differs", i)
		}
	}
	return nil
}

// TestRoundTrip: what is written is read back, plain and encrypted.
func TestRoundTrip(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	items := sample()
	for _, k := range [][]byte{nil, key} {
		b := write(t, items, k)
		got, err := readAll(b, k)
		if err != nil {
			t.Fatalf("encrypted %v: %v", k != nil, err)
		}
		if err := same(got, items); err != nil {
			t.Fatalf("encrypted %v: %v", k != nil, err)
		}
		if k != nil && bytes.Contains(b, []byte("sversion")) {
			t.Fatal("an encrypted backup shows a key in the clear")
		}
	}
}

// TestDamageIsRefused: a backup cut anywhere, or with any byte of its body
// changed, reads as damaged (never as a shorter backup); a wrong key is
// said to be one.
func TestDamageIsRefused(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	for _, k := range [][]byte{nil, key} {
		b := write(t, sample(), k)
		head := bytes.IndexByte(b[len(magic):], '\n') + len(magic) + 1
		for _, cut := range []int{head, head + 10, len(b) / 2, len(b) - 40, len(b) - 1} {
			if _, err := readAll(b[:cut], k); !errors.Is(err, ErrCorrupt) {
				t.Errorf("encrypted %v, cut at %d of %d: %v", k != nil, cut, len(b), err)
			}
		}
		for _, at := range []int{head + 5, len(b) / 2, len(b) - 3} {
			c := bytes.Clone(b)
			c[at] ^= 0x40
			if _, err := readAll(c, k); err == nil {
				t.Errorf("encrypted %v, byte %d changed: read without error", k != nil, at)
			}
		}
		if _, err := readAll(append(bytes.Clone(b), 'x'), k); err == nil {
			t.Errorf("encrypted %v: a byte after the end went unnoticed", k != nil)
		}
	}
	wrong := make([]byte, 32)
	if _, err := readAll(write(t, sample(), key), wrong); !errors.Is(err, ErrKey) {
		t.Fatalf("wrong key: %v", err)
	}
	r, err := Open(bytes.NewReader(write(t, sample(), key)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err == nil {
		t.Fatal("an encrypted backup was read without its key")
	}
	if _, err := Open(bytes.NewReader([]byte("not a backup"))); err == nil {
		t.Fatal("a file that is no backup opened")
	}
}
