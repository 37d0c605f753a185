package columns

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// Arrays round-trip; a length past what is left, however large, is an
// error, not a panic.
func TestArrays(t *testing.T) {
	var buf bytes.Buffer
	w := Writer{W: &buf}
	w.Array(Bytes64([]uint64{1, 2, 3}))
	w.Array([]byte("abc"))
	w.Array(Bytes32([]uint32{7}))
	if w.Err != nil {
		t.Fatal(w.Err)
	}
	r := Reader{B: buf.Bytes(), What: "test"}
	if got := U64s(r.Array(24)); len(got) != 3 || got[2] != 3 {
		t.Fatalf("u64s: %v", got)
	}
	if got := String(r.Array(-1)); got != "abc" {
		t.Fatalf("string: %q", got)
	}
	if got := U32s(r.Array(4)); len(got) != 1 || got[0] != 7 || r.Err != nil || len(r.B) != 0 {
		t.Fatalf("u32s: %v, %v, %d left", got, r.Err, len(r.B))
	}
	for _, n := range []uint64{1<<64 - 1, 1<<64 - 7, 9} {
		r := Reader{B: binary.LittleEndian.AppendUint64(nil, n), What: "test"}
		if b := r.Array(-1); b != nil || r.Err == nil {
			t.Errorf("a length of %d with nothing after it: %v, %v", n, b, r.Err)
		}
	}
}
