package quant

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// SuperBlockSize is the number of elements in one super-block of the
// K-quant formats (Q4_K, Q5_K, Q6_K): ggml's QK_K.
const SuperBlockSize = 256

// The K-quant super-block layouts, byte for byte as ggml stores them (all
// little-endian, d and dmin are IEEE half floats):
//
//	Q4_K  144 bytes  d, dmin, u8 scales[12], u8 qs[128]
//	Q5_K  176 bytes  d, dmin, u8 scales[12], u8 qh[32], u8 qs[128]
//	Q6_K  210 bytes  u8 ql[128], u8 qh[64], i8 sc[16], d
//
// Q4_K and Q5_K split the 256 elements into 8 sub-blocks of 32. Sub-block
// s has a 6-bit scale sc[s] and a 6-bit min m[s] packed into scales[12]
// (see scaleMin); its elements are x = d·sc[s]·q − dmin·m[s]. The 4-bit
// codes come in 64-element groups g = 0..3, each using qs[32g:32g+32]:
// element 64g+l (l < 32) is the low nibble of qs[32g+l], element 64g+32+l
// its high nibble. Q5_K adds a fifth bit (value 16) to each code: for
// element 64g+l it is bit 2g of qh[l], for element 64g+32+l bit 2g+1.
//
// Q6_K has 16 sub-blocks of 16 with signed 8-bit scales; x = d·sc[s]·(q−32)
// with 6-bit codes q. Each 128-element half h = 0, 1 uses ql[64h:64h+64],
// qh[32h:32h+32] and sc[8h:8h+8]; for l < 32 the element at 128h+32k+l
// (k = 0..3) takes its low four bits from ql[64h+l] (k = 0: low nibble,
// k = 2: high nibble) or ql[64h+32+l] (k = 1: low, k = 3: high), its top
// two bits from bits 2k, 2k+1 of qh[32h+l], and its scale from
// sc[8h + 2k + l/16].

var kDecoders = map[ir.DType]func(dst []float32, src []byte){
	ir.Q4_K: decQ4_K,
	ir.Q5_K: decQ5_K,
	ir.Q6_K: decQ6_K,
}

// scaleMin unpacks the 6-bit scale and min of sub-block j (0..7) from the
// 12 packed bytes of a Q4_K/Q5_K super-block: sub-blocks 0..3 keep theirs
// in the low six bits of bytes j (scale) and j+4 (min); sub-blocks 4..7
// keep their low four bits in the nibbles of byte j+4 (scale low, min high)
// and their top two bits in the top bits of bytes j−4 (scale) and j (min).
func scaleMin(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	sc = q[j+4]&0x0f | q[j-4]>>6<<4
	m = q[j+4]>>4 | q[j]>>6<<4
	return sc, m
}

// putScaleMin is the inverse of scaleMin for 6-bit sc and m; q must start
// zeroed.
func putScaleMin(j int, q []byte, sc, m uint8) {
	if j < 4 {
		q[j] |= sc & 63
		q[j+4] |= m & 63
		return
	}
	q[j+4] |= sc&0x0f | m&0x0f<<4
	q[j-4] |= sc >> 4 << 6
	q[j] |= m >> 4 << 6
}

// decQ4_K expands one 144-byte super-block into 256 values.
func decQ4_K(dst []float32, src []byte) {
	d, dmin := f16(src), f16(src[2:])
	scales, qs := src[4:16], src[16:144]
	for g := 0; g < 4; g++ {
		sc1, m1 := scaleMin(2*g, scales)
		sc2, m2 := scaleMin(2*g+1, scales)
		d1, mm1 := d*float32(sc1), dmin*float32(m1)
		d2, mm2 := d*float32(sc2), dmin*float32(m2)
		q := qs[32*g : 32*g+32]
		y := dst[64*g : 64*g+64]
		for l := 0; l < 32; l++ {
			y[l] = float32(d1*float32(q[l]&0x0f)) - mm1
			y[32+l] = float32(d2*float32(q[l]>>4)) - mm2
		}
	}
}

// decQ5_K expands one 176-byte super-block into 256 values.
func decQ5_K(dst []float32, src []byte) {
	d, dmin := f16(src), f16(src[2:])
	scales, qh, qs := src[4:16], src[16:48], src[48:176]
	for g := 0; g < 4; g++ {
		sc1, m1 := scaleMin(2*g, scales)
		sc2, m2 := scaleMin(2*g+1, scales)
		d1, mm1 := d*float32(sc1), dmin*float32(m1)
		d2, mm2 := d*float32(sc2), dmin*float32(m2)
		q := qs[32*g : 32*g+32]
		y := dst[64*g : 64*g+64]
		lo, hi := uint(2*g), uint(2*g+1)
		for l := 0; l < 32; l++ {
			c1 := q[l]&0x0f | (qh[l]>>lo&1)<<4
			c2 := q[l]>>4 | (qh[l]>>hi&1)<<4
			y[l] = float32(d1*float32(c1)) - mm1
			y[32+l] = float32(d2*float32(c2)) - mm2
		}
	}
}

// decQ6_K expands one 210-byte super-block into 256 values.
func decQ6_K(dst []float32, src []byte) {
	d := f16(src[208:])
	for h := 0; h < 2; h++ {
		ql := src[64*h : 64*h+64]
		qh := src[128+32*h : 128+32*h+32]
		sc := src[192+8*h : 192+8*h+8]
		y := dst[128*h : 128*h+128]
		for l := 0; l < 32; l++ {
			codes := [4]uint8{
				ql[l]&0x0f | (qh[l]>>0&3)<<4,
				ql[32+l]&0x0f | (qh[l]>>2&3)<<4,
				ql[l]>>4 | (qh[l]>>4&3)<<4,
				ql[32+l]>>4 | (qh[l]>>6&3)<<4,
			}
			for k, c := range codes {
				s := float32(int8(sc[2*k+l/16]))
				y[32*k+l] = float32(d*s) * float32(int32(c)-32)
			}
		}
	}
}

// Q4_K encoding. This is weft's own encoder, not ggml's iterative one: per
// 32-element sub-block it takes the range [min(x, 0), max(x)] in 15 steps,
// quantizes the sub-block scales and mins to 6 bits against the
// super-block maxima, and then rounds every element against the scale and
// min as they will decode, so the 6-bit rounding of the scales is not
// compounded. The bytes are a valid Q4_K block for any decoder; they need
// not equal llama.cpp's for the same input.

func encQ4_K(dst []byte, x []float32) {
	clear(dst[:144])
	var scale, minv [8]float32
	var maxScale, maxMin float32
	for s := 0; s < 8; s++ {
		lo, hi := minMax(x[32*s : 32*s+32])
		lo = min(lo, 0) // the min is stored as a non-negative offset
		if !(hi >= lo) || math.IsInf(float64(hi-lo), 0) {
			lo, hi = 0, 0 // NaN or infinite input: unspecified codes, no panic
		}
		scale[s] = (hi - lo) / 15
		minv[s] = -lo
		maxScale, maxMin = max(maxScale, scale[s]), max(maxMin, minv[s])
	}
	d, dmin := maxScale/63, maxMin/63
	putF16(dst, d)
	putF16(dst[2:], dmin)
	// Decode d and dmin as stored so the codes below match the decoder.
	d, dmin = f16(dst), f16(dst[2:])
	id, idmin := inv(d), inv(dmin)
	scales, qs := dst[4:16], dst[16:144]
	for s := 0; s < 8; s++ {
		sc := trunc(float32(scale[s]*id)+0.5, 63)
		m := trunc(float32(minv[s]*idmin)+0.5, 63)
		putScaleMin(s, scales, sc, m)
		ds, ms := d*float32(sc), dmin*float32(m)
		ids := inv(ds)
		for l := 0; l < 32; l++ {
			c := trunc(float32((x[32*s+l]+ms)*ids)+0.5, 15)
			g, half := s/2, s%2
			qs[32*g+l] |= c << (4 * half)
		}
	}
}

// Q6_K encoding, weft's own too: per 16-element sub-block the element of
// largest magnitude maps to code −32 (the end of [−32, 31] with the most
// room), the sub-block scales go to int8 against the super-block's
// largest (which becomes −128), and every element rounds against its
// scale as decoded, clamped to the 6-bit range.

func encQ6_K(dst []byte, x []float32) {
	clear(dst[:210])
	var scale [16]float32
	var maxScale float32 // the sub-block scale of largest magnitude, signed
	for s := 0; s < 16; s++ {
		m := signedMax(x[16*s : 16*s+16])
		if math.IsNaN(float64(m)) || math.IsInf(float64(m), 0) {
			m = 0 // non-finite input: unspecified codes, no panic
		}
		scale[s] = -m / 32
		if abs32(scale[s]) > abs32(maxScale) {
			maxScale = scale[s]
		}
	}
	d := -maxScale / 128
	putF16(dst[208:], d)
	d = f16(dst[208:]) // as decoded, so the codes below match the decoder
	id := inv(d)
	ql, qh, sc := dst[0:128], dst[128:192], dst[192:208]
	for s := 0; s < 16; s++ {
		v := float32(math.Round(float64(scale[s] * id)))
		v = max(-128, min(127, v))
		sc[s] = byte(int8(v))
		ids := inv(d * v)
		for i := 16 * s; i < 16*s+16; i++ {
			q := float32(math.Round(float64(x[i] * ids)))
			if q != q { // NaN
				q = 0
			}
			c := uint8(max(-32, min(31, q)) + 32)
			h, r := i/128, i%128
			k, l := r/32, r%32
			j := 64*h + l
			if k%2 == 1 {
				j += 32
			}
			ql[j] |= c & 0x0f << (4 * (k / 2))
			qh[32*h+l] |= c >> 4 << (2 * k)
		}
	}
}

// kRowCheck validates a row of n elements of the K-quant dt in b bytes.
func kRowCheck(dt ir.DType, n, b int) error {
	if n%SuperBlockSize != 0 {
		return fmt.Errorf("quant: %v row of %d elements is not a whole number of %d-element super-blocks", dt, n, SuperBlockSize)
	}
	if want := int(dt.Bytes(int64(n))); b != want {
		return fmt.Errorf("quant: %v row of %d elements needs %d bytes, got %d", dt, n, want, b)
	}
	return nil
}

// decodeK decodes whole super-blocks of a K-quant type.
func decodeK(dt ir.DType, dst []float32, src []byte) error {
	dec, ok := kDecoders[dt]
	if !ok {
		return fmt.Errorf("quant: %w: no K-quant decoder for %v", ir.ErrUnsupported, dt)
	}
	if err := kRowCheck(dt, len(dst), len(src)); err != nil {
		return err
	}
	bb := dt.BlockBytes()
	for i := 0; i < len(dst)/SuperBlockSize; i++ {
		dec(dst[i*SuperBlockSize:(i+1)*SuperBlockSize], src[i*bb:(i+1)*bb])
	}
	return nil
}

// QuantizeRowQ6K encodes x (a multiple of 256 elements) into dst
// (ir.Q6_K.Bytes(len(x)) bytes) as Q6_K super-blocks.
func QuantizeRowQ6K(dst []byte, x []float32) error { return encodeK(ir.Q6_K, encQ6_K, dst, x) }

// QuantizeRowQ4K encodes x (a multiple of 256 elements) into dst
// (ir.Q4_K.Bytes(len(x)) bytes) as Q4_K super-blocks.
func QuantizeRowQ4K(dst []byte, x []float32) error { return encodeK(ir.Q4_K, encQ4_K, dst, x) }

// encodeK encodes x into dst super-block by super-block with enc, the
// encoder of the K-quant dt.
func encodeK(dt ir.DType, enc func(dst []byte, x []float32), dst []byte, x []float32) error {
	if err := kRowCheck(dt, len(x), len(dst)); err != nil {
		return err
	}
	bb := dt.BlockBytes()
	for i := 0; i < len(x)/SuperBlockSize; i++ {
		enc(dst[i*bb:(i+1)*bb], x[i*SuperBlockSize:(i+1)*SuperBlockSize])
	}
	return nil
}
