package columns

import "encoding/binary"

// Varints reads a record of uvarints, varints and length-prefixed bytes
// in turn. After the first that does not hold, Err is set, B is emptied
// and every later read gives zero.
type Varints struct {
	B   []byte
	Err bool
}

// Fail marks the record as not holding.
func (d *Varints) Fail() {
	d.Err, d.B = true, nil
}

// Uvarint reads a uvarint.
func (d *Varints) Uvarint() uint64 {
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Varint reads a zig-zag varint.
func (d *Varints) Varint() int64 {
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Bytes reads a uvarint length and that many bytes, in place.
func (d *Varints) Bytes() []byte {
	n := d.Uvarint()
	if n > uint64(len(d.B)) {
		d.Fail()
		return nil
	}
	out := d.B[:n:n]
	d.B = d.B[n:]
	return out
}
