//go:build amd64 && !noasm

package kernels

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/weftrt/weft/ir"
)

// BenchmarkQDecodeSeq times the decode GEMVs of one token of a 110M Llama
// in Q4_0 (12 layers of q/k/v as one 2304×768, wo 768², gate/up as one
// 4096×768, down 768×2048, then the 32000×768 classifier; ~62 MB in
// all, each matrix once per token, in that order) at 1 and 2 threads:
// GB/s of weight bytes, the figure a decode step's matmuls reach without
// the rest of the step. WEFT_SEQ_BIG=1 runs two 28000×2048 matrices of
// the same total size instead (per-op costs aside).
func BenchmarkQDecodeSeq(b *testing.B) {
	type mat struct {
		w    []byte
		N, K int
	}
	r := rand.New(rand.NewPCG(3, 4))
	var mats []mat
	add := func(N, K int) {
		w, _ := randQWeights(r, ir.Q4_0, N, K)
		mats = append(mats, mat{w, N, K})
	}
	if os.Getenv("WEFT_SEQ_BIG") == "1" {
		add(28000, 2048)
		add(28000, 2048)
	} else {
		for l := 0; l < 12; l++ {
			add(2304, 768)
			add(768, 768)
			add(4096, 768)
			add(768, 2048)
		}
		add(32000, 768)
	}
	var bytes int
	for _, m := range mats {
		bytes += len(m.w)
	}
	qa := map[int]*QuantizedActs{}
	for _, K := range []int{768, 2048} {
		q := new(QuantizedActs)
		if err := QuantizeActs(q, randFloats(r, K), K, 1, K); err != nil {
			b.Fatal(err)
		}
		qa[K] = q
	}
	y := make([]float32, 32000)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("t%d", threads), func(b *testing.B) {
			pool := NewPool(threads)
			defer pool.Close()
			for b.Loop() {
				for _, m := range mats {
					if err := QMatMul(pool, ir.Q4_0, m.w, m.N, qa[m.K], y[:m.N], m.N); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
