package quant

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/weftrt/weft/ir"
)

var fuzzTypes = []ir.DType{ir.Q8_0, ir.Q4_0, ir.Q4_1, ir.Q5_0, ir.Q5_1}

// fuzzFloats reads data as little-endian float32s, whole blocks of block
// elements and at most most of them (none where it holds no whole block or
// more), and reports whether every value is finite, below 1e4 in
// magnitude and either 0 or above tiny.
func fuzzFloats(data []byte, block, most int, tiny float64) (x []float32, finite bool) {
	n := len(data) / 4 / block * block
	if n == 0 || n > most*block {
		return nil, false
	}
	x = make([]float32, n)
	finite = true
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		v := math.Abs(float64(x[i]))
		finite = finite && !math.IsNaN(v) && v < 1e4 && (v == 0 || v > tiny)
	}
	return x, finite
}

// FuzzRoundTrip encodes arbitrary float32 blocks in every format: nothing
// panics, any bytes decode, and finite blocks of moderate range decode to
// within the format's step of the input.
func FuzzRoundTrip(f *testing.F) {
	seed := make([]byte, 4*BlockSize)
	for j := 0; j < BlockSize; j++ {
		binary.LittleEndian.PutUint32(seed[4*j:], math.Float32bits(float32(j)-15.5))
	}
	f.Add(seed)
	f.Add(make([]byte, 4*BlockSize))
	nan := append([]byte{}, seed...)
	binary.LittleEndian.PutUint32(nan, 0x7fc00000)
	f.Add(nan)
	f.Fuzz(func(t *testing.T, data []byte) {
		x, finite := fuzzFloats(data, BlockSize, 64, 1e-3)
		n := len(x)
		if n == 0 {
			return
		}
		for _, dt := range fuzzTypes {
			b := make([]byte, dt.Bytes(int64(n)))
			if err := QuantizeRow(dt, b, x); err != nil {
				t.Fatal(err)
			}
			y := make([]float32, n)
			if err := DequantizeRow(dt, y, b); err != nil {
				t.Fatal(err)
			}
			if !finite {
				continue
			}
			for i := 0; i < n/BlockSize; i++ {
				blk := x[i*BlockSize : (i+1)*BlockSize]
				lo, hi := minMax(blk)
				// One step of the coarsest (4-bit) grid (which also covers
				// the f16 rounding of d), plus the f16 rounding of m.
				step := math.Max(math.Abs(float64(lo)), math.Abs(float64(hi))) / 7
				if dt == ir.Q4_1 || dt == ir.Q5_1 {
					step = (float64(hi)-float64(lo))/7 + math.Abs(float64(lo))/1024
				}
				for j, v := range blk {
					if e := math.Abs(float64(v) - float64(y[i*BlockSize+j])); e > step*1.01+1e-6 {
						t.Fatalf("%v block %d element %d: %g decoded as %g (step %g)", dt, i, j, v, y[i*BlockSize+j], step)
					}
				}
			}
		}
	})
}

// FuzzKQuantize encodes arbitrary float32 super-blocks with the K-quant
// encoders (Q4_K, Q6_K): nothing panics, the bytes decode, and finite
// input of moderate range decodes to finite values no larger than twice
// the super-block's largest magnitude.
func FuzzKQuantize(f *testing.F) {
	seed := make([]byte, 4*SuperBlockSize)
	for j := 0; j < SuperBlockSize; j++ {
		binary.LittleEndian.PutUint32(seed[4*j:], math.Float32bits(float32(j%37)-15.5))
	}
	f.Add(seed)
	f.Add(make([]byte, 4*SuperBlockSize))
	nan := append([]byte{}, seed...)
	binary.LittleEndian.PutUint32(nan[40:], 0x7fc00000)
	f.Add(nan)
	f.Fuzz(func(t *testing.T, data []byte) {
		x, finite := fuzzFloats(data, SuperBlockSize, 8, 0)
		n := len(x)
		if n == 0 {
			return
		}
		for _, dt := range []ir.DType{ir.Q4_K, ir.Q6_K} {
			b := make([]byte, dt.Bytes(int64(n)))
			if err := EncodeRow(dt, b, x); err != nil {
				t.Fatal(err)
			}
			y := make([]float32, n)
			if err := DecodeRow(dt, y, b); err != nil {
				t.Fatal(err)
			}
			if !finite {
				continue
			}
			for s := 0; s < n/SuperBlockSize; s++ {
				amax := math.Abs(float64(signedMax(x[s*SuperBlockSize : (s+1)*SuperBlockSize])))
				for i := s * SuperBlockSize; i < (s+1)*SuperBlockSize; i++ {
					if v := math.Abs(float64(y[i])); math.IsNaN(v) || v > 2*amax+1e-3 {
						t.Fatalf("%v element %d: %g decodes to %g (largest |x| %g)", dt, i, x[i], y[i], amax)
					}
				}
			}
		}
	})
}
