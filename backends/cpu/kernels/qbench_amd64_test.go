//go:build amd64 && !noasm

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

var qRowSink float32

// BenchmarkQRowCold compares the AVX-512 row dot products one row per call
// on cold weights (256 MB of random bytes cycled, one thread): the
// per-block Q4_0 kernel ("block"), the grouped one ("group", qlay.go), the
// many-rows one ("rows", a task's rows per call, as QMatMul's decode path
// runs it) and the K-quant kernels on the same bytes (their values do not
// matter for speed). GB/s of weight bytes per CPU second.
func BenchmarkQRowCold(b *testing.B) {
	if BestISA() < AVX512 || !hasVNNI || !hasVBMI {
		b.Skip("no AVX-512 VNNI/VBMI")
	}
	const K, batch = 4096, 1024
	nb := K / qBlock
	rb := nb * 18
	rows := (256 << 20) / rb / batch * batch
	r := rand.New(rand.NewPCG(1, 2))
	w, _ := randQWeights(r, ir.Q4_0, rows, K)
	var qa QuantizedActs
	if err := QuantizeActs(&qa, randFloats(r, K), K, 1, K); err != nil {
		b.Fatal(err)
	}
	lay := qa.qGroups(qLayInterleaved)
	q4, _, ds := qa.q4K()
	d16, b16 := qa.q6K()
	y := make([]float32, batch)
	kernels := []struct {
		name string
		row  func(row []byte) float32 // one row per call, or
		all  func(w []byte)           // batch rows per call
	}{
		{name: "block", row: func(row []byte) float32 { return q4VNNI(nb, row, qa.qs, qa.d, qa.nsum) }},
		{name: "group", row: func(row []byte) float32 { return q4G512(nb/4, row, lay) }},
		{name: "rows", all: func(w []byte) { q4G512rows(batch, nb/4, w, rb, lay, y, PrefetchKeep) }},
		{name: "q4k", row: func(row []byte) float32 { return q4K512(K/256, row, q4, ds, nil) }},
		{name: "q6k", row: func(row []byte) float32 { return q6K512(rb/210, row, qa.qs, d16, b16) }},
	}
	for _, k := range kernels {
		b.Run(k.name, func(b *testing.B) {
			i := 0
			c0 := cpuNow()
			for b.Loop() {
				chunk := w[i*rb : (i+batch)*rb]
				if k.all != nil {
					k.all(chunk)
				} else {
					for n := 0; n < batch; n++ {
						qRowSink += k.row(chunk[n*rb : (n+1)*rb])
					}
				}
				i = (i + batch) % rows
			}
			b.ReportMetric(float64(rb)*batch*float64(b.N)/(cpuNow()-c0)/1e9, "GB/s@cpu")
		})
	}
}
