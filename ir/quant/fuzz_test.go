package quant

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/weftrt/weft/ir"
)

var fuzzTypes = []ir.DType{ir.Q8_0, ir.Q4_0, ir.Q4_1, ir.Q5_0, ir.Q5_1}

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
		n := len(data) / 4 / BlockSize * BlockSize
		if n == 0 || n > 64*BlockSize {
			return
		}
		x := make([]float32, n)
		finite := true
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
			v := float64(x[i])
			finite = finite && !math.IsNaN(v) && math.Abs(v) < 1e4 && (v == 0 || math.Abs(v) > 1e-3)
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
