package qmatmul

import (
	"math/rand"
	"testing"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// BenchmarkQMatMul measures the reference kernel on a decode-sized product
// (8 rows × a 1024×1024 weight) for each weight format.
func BenchmarkQMatMul(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x := randTensor(rng, ir.Float32, 8, 1024)
	wf := randTensor(rng, ir.Float32, 1024, 1024)
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0, ir.Int8} {
		in := []*ir.Tensor{x}
		if dt == ir.Int8 {
			q, s, err := quant.QuantizePerChannel(wf)
			if err != nil {
				b.Fatal(err)
			}
			in = append(in, q, s)
		} else {
			q, err := quant.Quantize(wf, dt)
			if err != nil {
				b.Fatal(err)
			}
			in = append(in, q)
		}
		b.Run(dt.String(), func(b *testing.B) {
			b.SetBytes(int64(len(in[1].Data)))
			for b.Loop() {
				if _, err := call("QMatMul", in...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
