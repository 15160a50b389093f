//go:build amd64 && !noasm

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/internal/hugemem"

	"github.com/weftrt/weft/ir"
)

// BenchmarkQRowsK times the decode rows kernel of Q4_0 (one thread, a
// task's rows per call) on rows as short as a small model's (K = 768,
// 2048) and as a 7B's (4096): "l2" reuses 128 KiB of weights (the
// kernel's arithmetic ceiling), "cold" cycles through 256 MB; "gguf" is
// the kernel on the GGUF block layout, "packed" the lane-packed one
// (q4p.go) on huge pages, as the CPU backend keeps it, "packed-nta" the
// same with non-temporal prefetches (PrefetchStream). GB/s of weight
// bytes per CPU second.
func BenchmarkQRowsK(b *testing.B) {
	if BestISA() < AVX512 || !hasVNNI || !hasVBMI {
		b.Skip("no AVX-512 VNNI/VBMI")
	}
	var slabs hugemem.Slabs
	for _, K := range []int{768, 2048, 4096} {
		nb := K / qBlock
		rb := nb * 18
		batch := (128 << 10) / rb
		r := rand.New(rand.NewPCG(1, 2))
		var qa QuantizedActs
		if err := QuantizeActs(&qa, randFloats(r, K), K, 1, K); err != nil {
			b.Fatal(err)
		}
		lay := qa.qGroups(qLayInterleaved)
		var pr QRows
		pr.InitPacked(ir.Q4_0, &qa)
		y := make([]float32, batch)
		for _, mode := range []string{"l2", "cold"} {
			rows := batch
			if mode == "cold" {
				rows = (256 << 20) / rb / batch * batch
			}
			w, _ := randQWeights(r, ir.Q4_0, rows, K)
			// The packed weights on huge pages outside the Go heap, as the
			// CPU backend keeps them (fast_weightcopy.go).
			piece, err := slabs.Alloc(len(w))
			if err != nil {
				b.Fatal(err)
			}
			if err := PackQ4RowsTo(piece.B, w, rows, K); err != nil {
				b.Fatal(err)
			}
			p := piece.B
			for _, layout := range []string{"gguf", "packed", "packed-nta"} {
				if layout != "gguf" && !PackedSupported(ir.Q4_0) {
					continue
				}
				pr.SetPrefetch(PrefetchKeep)
				if layout == "packed-nta" {
					pr.SetPrefetch(PrefetchStream)
				}
				b.Run(fmt.Sprintf("K%d/%s/%s", K, mode, layout), func(b *testing.B) {
					i := 0
					c0 := cpuNow()
					for b.Loop() {
						if layout != "gguf" {
							_ = pr.Run(p[i*rb:(i+batch)*rb], batch, y)
						} else {
							q4G512rows(batch, nb/4, w[i*rb:(i+batch)*rb], rb, lay, y, PrefetchKeep)
						}
						i = (i + batch) % rows
					}
					b.ReportMetric(float64(rb)*float64(batch)*float64(b.N)/(cpuNow()-c0)/1e9, "GB/s@cpu")
				})
			}
			piece.Free()
		}
	}
}
