package plan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// encoder appends the primitive encodings of the plan format's sections:
// unsigned and zig-zag varints, length-prefixed strings, fixed 4-byte
// floats. Everything is little-endian and written in a fixed order, so the
// same input always gives the same bytes.
type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)    { e.b = append(e.b, v) }
func (e *encoder) uv(v uint64)   { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) iv(v int64)    { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) n(v int)       { e.uv(uint64(v)) }
func (e *encoder) f32(v float32) { e.b = binary.LittleEndian.AppendUint32(e.b, math.Float32bits(v)) }
func (e *encoder) str(s string)  { e.n(len(s)); e.b = append(e.b, s...) }

// ref encodes an optional index: 0 for none, index+1 otherwise.
func (e *encoder) ref(i int) { e.uv(uint64(i + 1)) }

// errCorrupt marks a section whose contents do not decode; the File error
// wraps it with the file and section names.
var errCorrupt = errors.New("corrupt")

// decoder reads what encoder wrote. The first error sticks: later reads
// return zero values, so decoding code checks d.err once per record rather
// than after every field, and never indexes past the end of its input.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w at byte %d: %s", errCorrupt, d.off, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) left() int { return len(d.b) - d.off }

func (d *decoder) u8() uint8 {
	if d.err != nil {
		return 0
	}
	if d.left() < 1 {
		d.fail("unexpected end of section")
		return 0
	}
	v := d.b[d.off]
	d.off++
	return v
}

func (d *decoder) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b[d.off:])
	if k <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += k
	return v
}

func (d *decoder) iv() int64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Varint(d.b[d.off:])
	if k <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += k
	return v
}

func (d *decoder) f32() float32 {
	if d.err != nil {
		return 0
	}
	if d.left() < 4 {
		d.fail("unexpected end of section")
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return math.Float32frombits(v)
}

// count reads a element count of a list whose elements take at least
// minBytes each, refusing counts that the rest of the section cannot hold
// (so a corrupted count never makes the reader allocate gigabytes).
func (d *decoder) count(what string, minBytes int) int {
	v := d.uv()
	if d.err != nil {
		return 0
	}
	if v > uint64(d.left()/max(minBytes, 1)) {
		d.fail("%s count %d exceeds what the remaining %d bytes can hold", what, v, d.left())
		return 0
	}
	return int(v)
}

func (d *decoder) str() string {
	n := d.count("string length", 1)
	if d.err != nil {
		return ""
	}
	s := string(d.b[d.off : d.off+n])
	d.off += n
	return s
}

// index reads a required index below limit.
func (d *decoder) index(what string, limit int) int {
	v := d.uv()
	if d.err == nil && v >= uint64(limit) {
		d.fail("%s index %d out of range (have %d)", what, v, limit)
		return 0
	}
	return int(v)
}

// ref reads an optional index (see encoder.ref): -1 for none.
func (d *decoder) ref(what string, limit int) int {
	v := d.uv()
	if d.err == nil && v > uint64(limit) {
		d.fail("%s index %d out of range (have %d)", what, v-1, limit)
		return -1
	}
	return int(v) - 1
}

// done reports trailing garbage as corruption.
func (d *decoder) done() {
	if d.err == nil && d.left() != 0 {
		d.fail("%d unexpected trailing bytes", d.left())
	}
}
