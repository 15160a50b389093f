package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// BlockSize is the number of elements in one block of every format here.
const BlockSize = 32

const half = BlockSize / 2

// codec is one block format: enc fills one block from 32 values, dec
// expands one block into 32 values.
type codec struct {
	enc func(dst []byte, x []float32)
	dec func(dst []float32, src []byte)
}

var codecs = map[ir.DType]codec{
	ir.Q8_0: {encQ8_0, decQ8_0},
	ir.Q4_0: {encQ4_0, decQ4_0},
	ir.Q4_1: {encQ4_1, decQ4_1},
	ir.Q5_0: {encQ5_0, decQ5_0},
	ir.Q5_1: {encQ5_1, decQ5_1},
}

// Supported reports whether dt is a block format this package encodes and
// decodes.
func Supported(dt ir.DType) bool { _, ok := codecs[dt]; return ok }

// rowCheck validates the sizes of a row of n elements stored in b bytes of dt.
func rowCheck(dt ir.DType, n, b int) (codec, error) {
	c, ok := codecs[dt]
	if !ok {
		return codec{}, fmt.Errorf("quant: %w: no codec for %v", ir.ErrUnsupported, dt)
	}
	if n%BlockSize != 0 {
		return codec{}, fmt.Errorf("quant: %v row of %d elements is not a whole number of %d-element blocks", dt, n, BlockSize)
	}
	if want := int(dt.Bytes(int64(n))); b != want {
		return codec{}, fmt.Errorf("quant: %v row of %d elements needs %d bytes, got %d", dt, n, want, b)
	}
	return c, nil
}

// QuantizeRow encodes x into dst in dt's block layout. len(x) must be a
// multiple of 32 and len(dst) must be dt.Bytes(len(x)).
func QuantizeRow(dt ir.DType, dst []byte, x []float32) error {
	c, err := rowCheck(dt, len(x), len(dst))
	if err != nil {
		return err
	}
	bb := dt.BlockBytes()
	for i := 0; i < len(x)/BlockSize; i++ {
		c.enc(dst[i*bb:(i+1)*bb], x[i*BlockSize:(i+1)*BlockSize])
	}
	return nil
}

// DequantizeRow decodes the blocks in src into dst (len(dst) elements,
// a multiple of 32; len(src) must be dt.Bytes(len(dst))).
func DequantizeRow(dt ir.DType, dst []float32, src []byte) error {
	c, err := rowCheck(dt, len(dst), len(src))
	if err != nil {
		return err
	}
	bb := dt.BlockBytes()
	for i := 0; i < len(dst)/BlockSize; i++ {
		c.dec(dst[i*BlockSize:(i+1)*BlockSize], src[i*bb:(i+1)*bb])
	}
	return nil
}

// f16 reads the half float at b[0:2].
func f16(b []byte) float32 { return ir.F16ToF32(binary.LittleEndian.Uint16(b)) }

// putF16 stores v as a half float at b[0:2].
func putF16(b []byte, v float32) { binary.LittleEndian.PutUint16(b, ir.F32ToF16(v)) }

// signedMax returns the element of largest magnitude, with its sign (the
// first one on ties).
func signedMax(x []float32) float32 {
	var amax, m float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, m = a, v
		}
	}
	return m
}

// minMax returns the smallest and largest element.
func minMax(x []float32) (lo, hi float32) {
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// inv is 1/d, or 0 for d = 0 (an all-zero block encodes as all-zero codes).
func inv(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}

// trunc converts v to an int code as C's (int8_t) cast does for the
// in-range values the encoders produce, and clamps the result to [0, hi]
// so that non-finite input cannot yield codes outside the format.
func trunc(v float32, hi int) uint8 {
	if !(v > 0) { // also NaN
		return 0
	}
	if v >= float32(hi) {
		return uint8(hi)
	}
	return uint8(int(v))
}

// Q8_0: d (f16), int8 q[32]; x = d·q.

func encQ8_0(dst []byte, x []float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, abs32(v))
	}
	d := amax / 127
	id := inv(d)
	putF16(dst, d)
	for j, v := range x {
		q := math.Round(float64(float32(v * id))) // half away from zero, as C's roundf
		dst[2+j] = byte(int8(max(-127, min(127, q))))
	}
}

func decQ8_0(dst []float32, src []byte) {
	d := f16(src)
	for j := range dst {
		dst[j] = float32(int8(src[2+j])) * d
	}
}

// nibbles packs 32 four-bit codes into qs[16]: element j low, j+16 high.
func nibbles(qs []byte, codes *[BlockSize]uint8) {
	for j := 0; j < half; j++ {
		qs[j] = codes[j]&0x0f | codes[j+half]<<4
	}
}

// unnibble is the inverse of nibbles, adding the fifth bits from qh (bit j
// for element j) when hasHigh is set.
func unnibble(codes *[BlockSize]int32, qs []byte, qh uint32, hasHigh bool) {
	for j := 0; j < half; j++ {
		codes[j] = int32(qs[j] & 0x0f)
		codes[j+half] = int32(qs[j] >> 4)
	}
	if hasHigh {
		for j := range codes {
			codes[j] |= int32(qh>>uint(j)&1) << 4
		}
	}
}

// highBits collects the fifth bit of each code into a qh word.
func highBits(codes *[BlockSize]uint8) uint32 {
	var qh uint32
	for j, c := range codes {
		qh |= uint32(c>>4&1) << uint(j)
	}
	return qh
}

// Q4_0: d (f16), qs[16]; x = d·(q−8), d = max/−8.

func encQ4_0(dst []byte, x []float32) {
	d := signedMax(x) / -8
	id := inv(d)
	putF16(dst, d)
	var codes [BlockSize]uint8
	for j, v := range x {
		codes[j] = trunc(float32(v*id)+8.5, 15)
	}
	nibbles(dst[2:18], &codes)
}

func decQ4_0(dst []float32, src []byte) {
	d := f16(src)
	var codes [BlockSize]int32
	unnibble(&codes, src[2:18], 0, false)
	for j, c := range codes {
		dst[j] = float32(c-8) * d
	}
}

// Q4_1: d (f16), m (f16), qs[16]; x = d·q + m, d = (max−min)/15, m = min.

func encQ4_1(dst []byte, x []float32) {
	lo, hi := minMax(x)
	d := (hi - lo) / 15
	id := inv(d)
	putF16(dst, d)
	putF16(dst[2:], lo)
	var codes [BlockSize]uint8
	for j, v := range x {
		codes[j] = trunc(float32((v-lo)*id)+0.5, 15)
	}
	nibbles(dst[4:20], &codes)
}

func decQ4_1(dst []float32, src []byte) {
	d, m := f16(src), f16(src[2:])
	var codes [BlockSize]int32
	unnibble(&codes, src[4:20], 0, false)
	for j, c := range codes {
		dst[j] = float32(float32(c)*d) + m
	}
}

// Q5_0: d (f16), qh (u32), qs[16]; x = d·(q−16), d = max/−16.

func encQ5_0(dst []byte, x []float32) {
	d := signedMax(x) / -16
	id := inv(d)
	putF16(dst, d)
	var codes [BlockSize]uint8
	for j, v := range x {
		codes[j] = trunc(float32(v*id)+16.5, 31)
	}
	binary.LittleEndian.PutUint32(dst[2:], highBits(&codes))
	nibbles(dst[6:22], &codes)
}

func decQ5_0(dst []float32, src []byte) {
	d := f16(src)
	var codes [BlockSize]int32
	unnibble(&codes, src[6:22], binary.LittleEndian.Uint32(src[2:]), true)
	for j, c := range codes {
		dst[j] = float32(c-16) * d
	}
}

// Q5_1: d (f16), m (f16), qh (u32), qs[16]; x = d·q + m, d = (max−min)/31.

func encQ5_1(dst []byte, x []float32) {
	lo, hi := minMax(x)
	d := (hi - lo) / 31
	id := inv(d)
	putF16(dst, d)
	putF16(dst[2:], lo)
	var codes [BlockSize]uint8
	for j, v := range x {
		codes[j] = trunc(float32((v-lo)*id)+0.5, 31)
	}
	binary.LittleEndian.PutUint32(dst[4:], highBits(&codes))
	nibbles(dst[8:24], &codes)
}

func decQ5_1(dst []float32, src []byte) {
	d, m := f16(src), f16(src[2:])
	var codes [BlockSize]int32
	unnibble(&codes, src[8:24], binary.LittleEndian.Uint32(src[4:]), true)
	for j, c := range codes {
		dst[j] = float32(float32(c)*d) + m
	}
}
