package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// The K-quant tests build super-blocks byte by byte from the layout in
// ggml's format (as documented in kquant.go) with scales and codes chosen
// so that every expected value is exact in float32, and compare against
// values computed here from the formula, not from the decoder.

// Sub-block scales and mins for Q4_K/Q5_K, with values above 15 in
// sub-blocks 4..7 so that the packed top bits matter.
var (
	kScales = [8]float32{1, 2, 3, 4, 20, 33, 47, 63}
	kMins   = [8]float32{5, 6, 7, 8, 17, 40, 50, 60}
	// kPacked is kScales/kMins packed by hand:
	//   bytes 0..3: sc[j] | (sc[j+4]>>4)<<6   1|1<<6, 2|2<<6, 3|2<<6, 4|3<<6
	//   bytes 4..7: m[j]  | (m[j+4]>>4)<<6    5|1<<6, 6|2<<6, 7|3<<6, 8|3<<6
	//   bytes 8..11: sc[j+4]&15 | (m[j+4]&15)<<4
	kPacked = []byte{65, 130, 131, 196, 69, 134, 199, 200, 20, 129, 47, 207}
)

const (
	halfOne     = 0x3800 // 0.5 as f16
	halfQuarter = 0x3400 // 0.25 as f16
)

func decodeOne(t *testing.T, dt ir.DType, block []byte) []float32 {
	t.Helper()
	require.Len(t, block, dt.BlockBytes())
	out := make([]float32, SuperBlockSize)
	require.NoError(t, DecodeRow(dt, out, block))
	return out
}

func TestQ4KLayout(t *testing.T) {
	b := make([]byte, 144)
	binary.LittleEndian.PutUint16(b[0:], halfOne)
	binary.LittleEndian.PutUint16(b[2:], halfQuarter)
	copy(b[4:16], kPacked)
	code := func(e int) uint8 { return uint8((e*7 + 3 + 5*(e/32)) % 16) } // not periodic in 32
	for e := 0; e < 256; e++ {
		g, r := e/64, e%64
		if r < 32 {
			b[16+32*g+r] |= code(e)
		} else {
			b[16+32*g+r-32] |= code(e) << 4
		}
	}
	got := decodeOne(t, ir.Q4_K, b)
	for e := 0; e < 256; e++ {
		s := e / 32
		want := 0.5*kScales[s]*float32(code(e)) - 0.25*kMins[s]
		require.Equal(t, want, got[e], "element %d", e)
	}
	// The packing helper agrees with the hand-packed bytes.
	var packed [12]byte
	for s := 0; s < 8; s++ {
		putScaleMin(s, packed[:], uint8(kScales[s]), uint8(kMins[s]))
	}
	require.Equal(t, kPacked, packed[:])
}

func TestQ5KLayout(t *testing.T) {
	b := make([]byte, 176)
	binary.LittleEndian.PutUint16(b[0:], halfOne)
	binary.LittleEndian.PutUint16(b[2:], halfQuarter)
	copy(b[4:16], kPacked)
	qh, qs := b[16:48], b[48:176]
	code := func(e int) uint8 { return uint8((e*11 + 5 + 7*(e/32)) % 32) }
	for e := 0; e < 256; e++ {
		g, r := e/64, e%64
		c := code(e)
		bit := 2 * g
		if r >= 32 {
			bit++
			qs[32*g+r-32] |= (c & 15) << 4
		} else {
			qs[32*g+r] |= c & 15
		}
		qh[r%32] |= (c >> 4) << bit
	}
	got := decodeOne(t, ir.Q5_K, b)
	for e := 0; e < 256; e++ {
		s := e / 32
		want := 0.5*kScales[s]*float32(code(e)) - 0.25*kMins[s]
		require.Equal(t, want, got[e], "element %d", e)
	}
}

func TestQ6KLayout(t *testing.T) {
	sc := [16]int8{1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 127, -128}
	b := make([]byte, 210)
	ql, qh := b[0:128], b[128:192]
	for i, s := range sc {
		b[192+i] = byte(s)
	}
	binary.LittleEndian.PutUint16(b[208:], halfOne)
	code := func(e int) uint8 { return uint8((e*13 + 7 + 5*(e/32)) % 64) }
	for e := 0; e < 256; e++ {
		h, r := e/128, e%128
		k, l := r/32, r%32
		c := code(e)
		idx := 64*h + l + 32*(k%2)
		ql[idx] |= (c & 15) << (4 * (k / 2))
		qh[32*h+l] |= (c >> 4) << (2 * k)
	}
	got := decodeOne(t, ir.Q6_K, b)
	for e := 0; e < 256; e++ {
		// Element e belongs to the 16-element sub-block e/16.
		want := 0.5 * float32(sc[e/16]) * float32(int(code(e))-32)
		require.Equal(t, want, got[e], "element %d", e)
	}
}

func TestDecodeRowSizes(t *testing.T) {
	for _, dt := range []ir.DType{ir.Q4_K, ir.Q5_K, ir.Q6_K} {
		require.Error(t, DecodeRow(dt, make([]float32, 255), make([]byte, dt.BlockBytes())), "%v", dt)
		require.Error(t, DecodeRow(dt, make([]float32, 256), make([]byte, dt.BlockBytes()-1)), "%v", dt)
		require.NoError(t, DecodeRow(dt, make([]float32, 512), make([]byte, 2*dt.BlockBytes())), "%v", dt)
	}
	require.Error(t, DecodeRow(ir.Float16, make([]float32, 3), make([]byte, 5)))
	_, err := Dequantize(ir.NewTensor(ir.Int32, []int64{2}))
	require.ErrorIs(t, err, ir.ErrUnsupported)
}

func TestDequantizeFloatsAndBlocks(t *testing.T) {
	vals := []float64{1.5, -2.25, 0, 65504, -0.0009765625, 3}
	for _, dt := range []ir.DType{ir.Float32, ir.Float16, ir.BFloat16} {
		src := ir.FromFloat64(dt, []int64{2, 3}, vals)
		out, err := Dequantize(src)
		require.NoError(t, err)
		require.Equal(t, []int64{2, 3}, out.Shape)
		for i := range vals {
			require.Equal(t, src.Float64(i), out.Float64(i), "%v element %d", dt, i)
		}
	}
	// Block formats: Dequantize agrees with the per-row codec.
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 2*256)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0, ir.Q4_1, ir.Q5_0, ir.Q5_1, ir.Q4_K} {
		q, err := Quantize(ir.FromFloat32([]int64{2, 256}, x), dt)
		require.NoError(t, err, "%v", dt)
		out, err := Dequantize(q)
		require.NoError(t, err, "%v", dt)
		want := make([]float32, len(x))
		if dt == ir.Q4_K {
			require.NoError(t, decodeK(dt, want, q.Data))
		} else {
			require.NoError(t, DequantizeRow(dt, want, q.Data))
		}
		require.Equal(t, want, out.Float32s(), "%v", dt)
	}
}

func TestQ4KQuantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := map[string]func(i int) float32{
		"gaussian": func(int) float32 { return float32(rng.NormFloat64()) },
		"positive": func(int) float32 { return float32(rng.Float64()*3 + 1) },
		"ramp":     func(i int) float32 { return float32(i%256)/8 - 10 },
		"zeros":    func(int) float32 { return 0 },
	}
	for name, gen := range cases {
		x := make([]float32, 4*256)
		for i := range x {
			x[i] = gen(i)
		}
		b := make([]byte, ir.Q4_K.Bytes(int64(len(x))))
		require.NoError(t, QuantizeRowQ4K(b, x), name)
		y := make([]float32, len(x))
		require.NoError(t, DecodeRow(ir.Q4_K, y, b), name)
		// 4 bits with 6-bit sub-block scales: the relative error of a
		// min/max encoder stays well under 1% on these inputs.
		e := RelError(x, y)
		require.Less(t, e, 0.01, "%s: relative error %g", name, e)
		// Every element within one step (plus scale rounding slack) of the input.
		for s := 0; s < len(x)/32; s++ {
			lo, hi := minMax(x[32*s : 32*s+32])
			step := (hi - min(lo, 0)) / 15
			for l := 0; l < 32; l++ {
				i := 32*s + l
				require.LessOrEqual(t, math.Abs(float64(x[i]-y[i])), float64(step)+1e-6+0.05*math.Abs(float64(x[i])), "%s element %d", name, i)
			}
		}
	}
	// Non-finite input must not panic.
	x := make([]float32, 256)
	x[3] = float32(math.NaN())
	x[9] = float32(math.Inf(1))
	require.NoError(t, QuantizeRowQ4K(make([]byte, 144), x))
	require.Error(t, QuantizeRowQ4K(make([]byte, 144), make([]float32, 32)))
}

func BenchmarkDecodeK(b *testing.B) {
	for _, dt := range []ir.DType{ir.Q4_K, ir.Q5_K, ir.Q6_K} {
		b.Run(dt.String(), func(b *testing.B) {
			n := 4096
			src := make([]byte, dt.Bytes(int64(n)))
			for i := range src {
				src[i] = byte(i * 31)
			}
			dst := make([]float32, n)
			b.SetBytes(int64(n * 4))
			for b.Loop() {
				_ = DecodeRow(dt, dst, src)
			}
		})
	}
}

func TestQ6KQuantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := map[string]func(i int) float32{
		"gaussian": func(int) float32 { return float32(rng.NormFloat64()) },
		"positive": func(int) float32 { return float32(rng.Float64()*3 + 1) },
		"ramp":     func(i int) float32 { return float32(i%256)/8 - 10 },
		"outliers": func(i int) float32 {
			if i%97 == 0 {
				return 40
			}
			return float32(rng.NormFloat64()) * 0.01
		},
		"zeros": func(int) float32 { return 0 },
	}
	for name, gen := range cases {
		x := make([]float32, 4*256)
		for i := range x {
			x[i] = gen(i)
		}
		b := make([]byte, ir.Q6_K.Bytes(int64(len(x))))
		require.NoError(t, QuantizeRowQ6K(b, x), name)
		y := make([]float32, len(x))
		require.NoError(t, DecodeRow(ir.Q6_K, y, b), name)
		// 6-bit codes: the squared error stays under 1e-3 of the signal's.
		e := RelError(x, y)
		require.Less(t, e, 1e-3, "%s: relative error %g", name, e)
		// Every element within one step of its sub-block's decoded scale,
		// plus what the scale's own rounding to int8 costs at the ends.
		for s := 0; s < len(x)/16; s++ {
			blk := b[s/16*210:]
			ds := math.Abs(float64(f16(blk[208:]) * float32(int8(blk[192+s%16]))))
			amax := math.Abs(float64(signedMax(x[16*s : 16*s+16])))
			for i := 16 * s; i < 16*s+16; i++ {
				bound := ds + 32*math.Abs(amax/32-ds) + 1e-6*math.Abs(float64(x[i])) + 1e-9
				require.LessOrEqual(t, math.Abs(float64(x[i]-y[i])), bound, "%s element %d", name, i)
			}
		}
	}
	// EncodeRow takes Q6_K too; non-finite input must not panic; a row of
	// a partial super-block is an error.
	x := make([]float32, 256)
	x[3] = float32(math.NaN())
	x[9] = float32(math.Inf(-1))
	require.NoError(t, EncodeRow(ir.Q6_K, make([]byte, 210), x))
	require.Error(t, QuantizeRowQ6K(make([]byte, 210), make([]float32, 32)))
	require.Error(t, QuantizeRowQ6K(make([]byte, 200), make([]float32, 256)))
}
