package quant

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// h is the half-float bit pattern of v (v must be exactly representable).
func h(t *testing.T, v float32) [2]byte {
	t.Helper()
	b := ir.F32ToF16(v)
	require.Equal(t, v, ir.F16ToF32(b), "%g is not a half float", v)
	return [2]byte{byte(b), byte(b >> 8)}
}

// block concatenates byte pieces into one block.
func block(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func decode(t *testing.T, dt ir.DType, b []byte) []float32 {
	t.Helper()
	require.Len(t, b, dt.BlockBytes())
	out := make([]float32, BlockSize)
	require.NoError(t, DequantizeRow(dt, out, b))
	return out
}

// The decoders read blocks built by hand from the layouts in doc.go.
func TestDequantizeLayouts(t *testing.T) {
	t.Run("q8_0", func(t *testing.T) {
		d := h(t, 0.5)
		qs := make([]byte, 32)
		qs[0], qs[1], qs[2], qs[3], qs[31] = 1, 0xff, 127, 0x81, 0x80 // 1, -1, 127, -127, -128
		got := decode(t, ir.Q8_0, block(d[:], qs))
		want := make([]float32, 32)
		want[0], want[1], want[2], want[3], want[31] = 0.5, -0.5, 63.5, -63.5, -64
		require.Equal(t, want, got)
	})
	t.Run("q4_0", func(t *testing.T) {
		d := h(t, -0.25)
		qs := make([]byte, 16)
		for j := range qs {
			qs[j] = 0x88 // code 8 = 0 for both nibbles
		}
		qs[0] = 0x0f  // element 0: 15 → 7·d; element 16: 0 → −8·d
		qs[1] = 0x38  // element 1: 8 → 0;    element 17: 3 → −5·d
		qs[15] = 0x9c // element 15: 12 → 4·d; element 31: 9 → 1·d
		got := decode(t, ir.Q4_0, block(d[:], qs))
		want := make([]float32, 32)
		want[0], want[16], want[17], want[15], want[31] = -1.75, 2, 1.25, -1, -0.25
		require.Equal(t, want, got)
	})
	t.Run("q4_1", func(t *testing.T) {
		d, m := h(t, 0.5), h(t, -1)
		qs := make([]byte, 16)
		qs[0] = 0xa3 // element 0: 3 → 0.5; element 16: 10 → 4
		got := decode(t, ir.Q4_1, block(d[:], m[:], qs))
		require.Equal(t, float32(0.5), got[0])
		require.Equal(t, float32(4), got[16])
		require.Equal(t, float32(-1), got[1], "code 0 is the minimum")
	})
	t.Run("q5_0", func(t *testing.T) {
		d := h(t, 1)
		qh := make([]byte, 4)
		binary.LittleEndian.PutUint32(qh, 1<<0|1<<16|1<<31) // fifth bits of elements 0, 16, 31
		qs := make([]byte, 16)
		qs[0] = 0x21  // element 0: 1|16 → 1; element 16: 2|16 → 2
		qs[15] = 0xf0 // element 15: 0 → −16; element 31: 15|16 → 15
		got := decode(t, ir.Q5_0, block(d[:], qh, qs))
		require.Equal(t, float32(1), got[0])
		require.Equal(t, float32(2), got[16])
		require.Equal(t, float32(-16), got[15])
		require.Equal(t, float32(15), got[31])
		require.Equal(t, float32(-16), got[1], "no fifth bit, code 0")
	})
	t.Run("q5_1", func(t *testing.T) {
		d, m := h(t, 1), h(t, 0.5)
		qh := make([]byte, 4)
		binary.LittleEndian.PutUint32(qh, 1<<31)
		qs := make([]byte, 16)
		qs[15] = 0x10 // element 31: 1|16 = 17
		got := decode(t, ir.Q5_1, block(d[:], m[:], qh, qs))
		require.Equal(t, float32(17.5), got[31])
		require.Equal(t, float32(0.5), got[0])
	})
}

// The encoders put scales and codes where the layouts say.
func TestQuantizeLayouts(t *testing.T) {
	t.Run("q8_0", func(t *testing.T) {
		x := make([]float32, 32)
		x[0], x[1], x[2], x[3], x[4] = 127, 2.5, -2.5, 0.49, -127 // d = 1
		b := make([]byte, 34)
		require.NoError(t, QuantizeRow(ir.Q8_0, b, x))
		require.Equal(t, []byte{0x00, 0x3c}, b[:2], "d = 1.0 as f16")
		require.Equal(t, []int8{127, 3, -3, 0, -127}, []int8{int8(b[2]), int8(b[3]), int8(b[4]), int8(b[5]), int8(b[6])},
			"round half away from zero")
	})
	t.Run("q4_0", func(t *testing.T) {
		x := make([]float32, 32)
		x[5] = -3     // the largest magnitude: d = -3/-8 = 0.375, code 0
		x[20] = 3     // 3/0.375 = 8 → 16.5, clamped to code 15 (high nibble of qs[4])
		x[0] = -0.75  // -0.75/0.375 = -2 → code 6
		x[16] = 1.125 // 3 → 11 (high nibble of qs[0])
		b := make([]byte, 18)
		require.NoError(t, QuantizeRow(ir.Q4_0, b, x))
		require.Equal(t, ir.F32ToF16(0.375), binary.LittleEndian.Uint16(b), "d keeps the sign of the max: -3/-8")
		qs := b[2:]
		require.Equal(t, byte(0x06|0xb0), qs[0]) // 6 low (element 0), 11 high (element 16)
		require.Equal(t, byte(0x08|0xf0), qs[4]) // element 4: 0 → 8; element 20: 15
		require.Equal(t, byte(0x00|0x80), qs[5]) // element 5: code 0; element 21: 8
		deq := decode(t, ir.Q4_0, b)
		require.Equal(t, float32(-3), deq[5])
		require.Equal(t, float32(7*0.375), deq[20], "the opposite extreme loses one step")
	})
	t.Run("q5_0", func(t *testing.T) {
		x := make([]float32, 32)
		x[31] = 16 // d = 16/-16 = -1, code 0
		x[0] = -15 // 15 → 31: low nibble 15, fifth bit set
		b := make([]byte, 22)
		require.NoError(t, QuantizeRow(ir.Q5_0, b, x))
		require.Equal(t, ir.F32ToF16(-1), binary.LittleEndian.Uint16(b))
		qh := binary.LittleEndian.Uint32(b[2:])
		require.Equal(t, uint32(1)<<0, qh&1, "element 0 has its fifth bit")
		require.Zero(t, qh>>31, "element 31 (code 0) has none")
		require.Equal(t, uint32(1), qh>>1&1, "element 1 (x=0, code 16) has its fifth bit")
		require.Equal(t, byte(0x0f), b[6]&0x0f)
		require.Equal(t, byte(0x00), b[6+15]>>4)
	})
	t.Run("q4_1", func(t *testing.T) {
		x := make([]float32, 32)
		for j := range x {
			x[j] = float32(j%16) * 0.5 // min 0, max 7.5: d = 0.5, code j%16
		}
		b := make([]byte, 20)
		require.NoError(t, QuantizeRow(ir.Q4_1, b, x))
		require.Equal(t, ir.F32ToF16(0.5), binary.LittleEndian.Uint16(b))
		require.Equal(t, ir.F32ToF16(0), binary.LittleEndian.Uint16(b[2:]))
		for j := 0; j < 16; j++ {
			require.Equal(t, byte(j|j<<4), b[4+j])
		}
		require.Equal(t, x, decode(t, ir.Q4_1, b), "exactly representable")
	})
}

func TestRowErrors(t *testing.T) {
	require.Error(t, QuantizeRow(ir.Q8_0, make([]byte, 34), make([]float32, 31)))
	require.Error(t, QuantizeRow(ir.Q8_0, make([]byte, 33), make([]float32, 32)))
	require.Error(t, DequantizeRow(ir.Q4_0, make([]float32, 64), make([]byte, 18)))
	err := QuantizeRow(ir.Q4_K, make([]byte, 144), make([]float32, 256))
	require.True(t, errors.Is(err, ir.ErrUnsupported), "%v", err)
	require.ErrorContains(t, err, "unsupported")
	_, err = Quantize(ir.FromFloat32([]int64{2, 3}, make([]float32, 6)), ir.Q8_0)
	require.ErrorContains(t, err, "not a multiple of 32")
	_, err = Quantize(ir.NewTensor(ir.Int32, []int64{32}), ir.Q8_0)
	require.True(t, errors.Is(err, ir.ErrUnsupported))
	_, _, err = QuantizePerChannel(ir.NewTensor(ir.Float32, []int64{32}))
	require.ErrorContains(t, err, "2-D")
}

func gaussian(rng *rand.Rand, n int, sigma float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * sigma)
	}
	return x
}

// Every element is within half a step of its original, up to the f16
// rounding of the step (|d − d16| ≤ 2⁻¹¹·|d|, times the code), except the
// clamped extreme of the signed formats, which may be off by one step.
func TestErrorBounds(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		dt     ir.DType
		qmax   float64 // largest |code| after centring
		signed bool    // d = max/−levels: the side opposite the max clamps
	}{
		{ir.Q8_0, 127, false}, {ir.Q4_0, 8, true}, {ir.Q5_0, 16, true}, {ir.Q4_1, 15, false}, {ir.Q5_1, 31, false},
	} {
		t.Run(tc.dt.String(), func(t *testing.T) {
			const rows = 40
			x := gaussian(rng, rows*BlockSize, 0.02)
			x[7] = 0 // a zero and an all-zero block
			for j := 0; j < BlockSize; j++ {
				x[3*BlockSize+j] = 0
			}
			b := make([]byte, tc.dt.Bytes(int64(len(x))))
			require.NoError(t, QuantizeRow(tc.dt, b, x))
			y := make([]float32, len(x))
			require.NoError(t, DequantizeRow(tc.dt, y, b))
			bb := tc.dt.BlockBytes()
			for i := 0; i < rows; i++ {
				blk := b[i*bb:]
				d16 := math.Abs(float64(f16(blk)))
				m16 := 0.0
				if tc.dt == ir.Q4_1 || tc.dt == ir.Q5_1 {
					m16 = math.Abs(float64(f16(blk[2:])))
				}
				for j := 0; j < BlockSize; j++ {
					e := math.Abs(float64(x[i*BlockSize+j]) - float64(y[i*BlockSize+j]))
					bound := d16*(0.5+tc.qmax/2048) + m16/2048 + 1e-9
					if tc.signed && e > bound {
						bound += d16 // the one clamped level
					}
					require.LessOrEqual(t, e, bound, "block %d element %d: x=%g y=%g d=%g", i, j, x[i*BlockSize+j], y[i*BlockSize+j], d16)
				}
			}
			for j := 0; j < BlockSize; j++ {
				require.Zero(t, y[3*BlockSize+j], "an all-zero block decodes to zeros")
			}
		})
	}
}

// Decoding and re-encoding a symmetric block reproduces its bytes.
func TestRequantizeIsStable(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0, ir.Q5_0} {
		x := gaussian(rng, 8*BlockSize, 1)
		b := make([]byte, dt.Bytes(int64(len(x))))
		require.NoError(t, QuantizeRow(dt, b, x))
		y := make([]float32, len(x))
		require.NoError(t, DequantizeRow(dt, y, b))
		b2 := make([]byte, len(b))
		require.NoError(t, QuantizeRow(dt, b2, y))
		require.Equal(t, b, b2, "%v", dt)
	}
}

func TestInt8PerChannel(t *testing.T) {
	w := ir.FromFloat32([]int64{3, 4}, []float32{
		1.27, -0.5, 0.005, 0.015, // scale 0.01
		0, 0, 0, 0, // all zero: scale 0
		-254, 127, 1, 0.9999, // scale 2
	})
	q, s, err := QuantizePerChannel(w)
	require.NoError(t, err)
	require.Equal(t, []int64{3, 4}, q.Shape)
	require.Equal(t, []float32{0.01, 0, 2}, s.Float32s())
	require.Equal(t, []int64{127, -50, 1, 2, 0, 0, 0, 0, -127, 64, 1, 0}, q.Int64s(),
		"0.005/0.01 rounds half away from zero; 127/2 = 63.5 → 64")
	deq, err := DequantizePerChannel(q, s)
	require.NoError(t, err)
	for i, v := range deq.Float32s() {
		want := float32(int8(q.Data[i])) * s.Float32s()[i/4]
		require.Equal(t, want, v)
		require.LessOrEqual(t, math.Abs(float64(v)-float64(w.Float32s()[i])), float64(s.Float32s()[i/4])/2*1.0001)
	}
	_, err = DequantizePerChannel(q, ir.NewTensor(ir.Float32, []int64{2}))
	require.ErrorContains(t, err, "f32[3]")
}

func TestTensorRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	x := gaussian(rng, 3*64, 1)
	for _, dt := range []ir.DType{ir.Float32, ir.Float16} {
		src := ir.NewTensor(dt, []int64{3, 64})
		for i, v := range x {
			src.SetFloat64(i, float64(v))
		}
		q, err := Quantize(src, ir.Q8_0)
		require.NoError(t, err)
		require.Equal(t, ir.Q8_0, q.DType)
		require.Equal(t, []int64{3, 64}, q.Shape)
		require.Len(t, q.Data, 3*2*34)
		back, err := Dequantize(q)
		require.NoError(t, err)
		// The tensor form is the row form applied row by row.
		want := make([]float32, 64)
		row := make([]float32, 64)
		for r := 0; r < 3; r++ {
			for j := range row {
				row[j] = float32(src.Float64(r*64 + j))
			}
			b := make([]byte, 2*34)
			require.NoError(t, QuantizeRow(ir.Q8_0, b, row))
			require.Equal(t, b, q.Data[r*68:(r+1)*68])
			require.NoError(t, DequantizeRow(ir.Q8_0, want, b))
			require.Equal(t, want, back.Float32s()[r*64:(r+1)*64])
		}
	}
}

func TestRelError(t *testing.T) {
	require.Zero(t, RelError([]float32{1, 2}, []float32{1, 2}))
	require.InDelta(t, 0.25/5, RelError([]float32{1, 2}, []float32{1.5, 2}), 1e-12)
	require.True(t, math.IsInf(RelError([]float32{0, 0}, []float32{0, 1}), 1))
	require.Zero(t, RelError(nil, nil))
}

// The relative errors on Gaussian weights land where the step sizes put
// them (uniform rounding error d²/12 against σ²); the test logs the values
// for the record.
func TestGaussianRelError(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	const n, k = 256, 512
	w := ir.FromFloat32([]int64{n, k}, gaussian(rng, n*k, 0.02))
	for _, tc := range []struct {
		name   string
		lo, hi float64
		deq    func() *ir.Tensor
	}{
		{"q8_0", 1e-5, 1e-4, func() *ir.Tensor { return must(Dequantize(must(Quantize(w, ir.Q8_0)))) }},
		{"q4_0", 3e-3, 2e-2, func() *ir.Tensor { return must(Dequantize(must(Quantize(w, ir.Q4_0)))) }},
		{"q4_1", 2e-3, 2e-2, func() *ir.Tensor { return must(Dequantize(must(Quantize(w, ir.Q4_1)))) }},
		{"q5_0", 7e-4, 5e-3, func() *ir.Tensor { return must(Dequantize(must(Quantize(w, ir.Q5_0)))) }},
		{"q5_1", 5e-4, 5e-3, func() *ir.Tensor { return must(Dequantize(must(Quantize(w, ir.Q5_1)))) }},
		{"int8-per-channel", 1e-5, 2e-4, func() *ir.Tensor {
			q, s, err := QuantizePerChannel(w)
			require.NoError(t, err)
			return must(DequantizePerChannel(q, s))
		}},
	} {
		e := RelError(w.Float32s(), tc.deq().Float32s())
		t.Logf("%-17s relative error %.3e", tc.name, e)
		require.Greater(t, e, tc.lo, tc.name)
		require.Less(t, e, tc.hi, tc.name)
	}
}

func must(t *ir.Tensor, err error) *ir.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}
