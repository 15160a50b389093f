//go:build amd64 && !noasm

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// BenchmarkQ4Row compares the q4_0 row dot products on cold weights
// (256 MB cycled, one thread): the per-block VNNI kernel and the grouped
// one. GB/s of weight bytes per CPU second.
func BenchmarkQ4Row(b *testing.B) {
	if !hasVNNI || !hasVBMI {
		b.Skip("no VNNI/VBMI")
	}
	const K = 4096
	nb := K / qBlock
	rb := nb * 18
	rows := (256 << 20) / rb
	r := rand.New(rand.NewPCG(1, 2))
	w, _ := randQWeights(r, ir.Q4_0, rows, K)
	var qa QuantizedActs
	if err := QuantizeActs(&qa, randFloats(r, K), K, 1, K); err != nil {
		b.Fatal(err)
	}
	lay := qa.qGroups(qLayInterleaved)
	q4, sig := qa.q4K()
	d16, b16 := qa.q6K()

	kernels := map[string]func(row []byte) float32{
		"block": func(row []byte) float32 { return q4VNNI(nb, row, qa.qs, qa.d, qa.nsum) },
		"group": func(row []byte) float32 { return q4G512(nb/4, row, lay) },
		"q4k":   func(row []byte) float32 { return q4K512(K/256, row, q4, qa.d, sig) },
		"q6k":   func(row []byte) float32 { return q6K512(rb/210, row, qa.qs, d16, b16) },
	}
	for _, name := range []string{"block", "group", "q4k", "q6k", "block", "group", "q4k", "q6k"} {
		f := kernels[name]
		b.Run(name, func(b *testing.B) {
			var s float32
			i := 0
			c0 := cpuNow()
			for b.Loop() {
				for n := 0; n < 1024; n++ {
					s += f(w[i*rb : (i+1)*rb])
					i = (i + 1) % rows
				}
			}
			b.ReportMetric(float64(rb)*1024*float64(b.N)/(cpuNow()-c0)/1e9, "GB/s@cpu")
			_ = fmt.Sprint(s)
		})
	}
}
