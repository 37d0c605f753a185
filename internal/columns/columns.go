package columns

import (
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"
)

// Reader reads a segment's arrays in turn.
type Reader struct {
	B   []byte // what is left
	Err error  // the first error; later reads return nil
	// What names the segment in errors.
	What string
}

// U64 reads a uint64.
func (r *Reader) U64() uint64 {
	if r.Err != nil {
		return 0
	}
	if len(r.B) < 8 {
		r.Err = fmt.Errorf("%s: ends early", r.What)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.B)
	r.B = r.B[8:]
	return v
}

// Array returns the next array, which must be of size bytes (-1: any).
func (r *Reader) Array(size int) []byte {
	n := r.U64()
	if r.Err != nil {
		return nil
	}
	if n > uint64(len(r.B)) {
		r.Err = fmt.Errorf("%s: an array of %d bytes with %d left", r.What, n, len(r.B))
		return nil
	}
	padded := n + (8-n%8)%8
	if size >= 0 && n != uint64(size) || padded > uint64(len(r.B)) {
		r.Err = fmt.Errorf("%s: an array of %d bytes (want %d) with %d left", r.What, n, size, len(r.B))
		return nil
	}
	b := r.B[:n:n]
	r.B = r.B[padded:]
	return b
}

// Writer writes arrays, counting the bytes.
type Writer struct {
	W   io.Writer
	N   int
	Err error
}

// Raw writes b as it is.
func (w *Writer) Raw(b []byte) {
	if w.Err == nil {
		var k int
		k, w.Err = w.W.Write(b)
		w.N += k
	}
}

// U64 writes v.
func (w *Writer) U64(v uint64) { w.Raw(binary.LittleEndian.AppendUint64(nil, v)) }

// Array writes b as an array.
func (w *Writer) Array(b []byte) { w.ArrayOf(len(b), func() { w.Raw(b) }) }

// ArrayOf writes an array of size bytes that write puts out (with Raw).
func (w *Writer) ArrayOf(size int, write func()) {
	w.U64(uint64(size))
	start := w.N
	write()
	if w.Err == nil && w.N-start != size {
		w.Err = fmt.Errorf("columns: an array of %d bytes wrote %d", size, w.N-start)
	}
	w.Raw(make([]byte, (8-size%8)%8))
}

// littleEndian: the host's byte order is the arrays'.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Castable reports whether b can be used in place as values of size
// bytes: the host is little-endian and b is aligned.
func Castable(b []byte, size uintptr) bool {
	return littleEndian && len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%size == 0
}

// U64s is b as uint64 values: in place where it can be, else a copy.
func U64s(b []byte) []uint64 {
	if Castable(b, 8) {
		return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
	}
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out
}

// I64s is b as int64 values, as U64s.
func I64s(b []byte) []int64 {
	u := U64s(b)
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&u[0])), len(u))
}

// U32s is b as uint32 values: in place where it can be, else a copy.
func U32s(b []byte) []uint32 {
	if Castable(b, 4) {
		return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
	}
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// String is b as a string, in place.
func String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Bytes64 is vs as a little-endian array's bytes.
func Bytes64(vs []uint64) []byte {
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// Bytes32 is vs as a little-endian array's bytes.
func Bytes32(vs []uint32) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}
