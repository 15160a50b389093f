package fused

import (
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// BERT-base sizes: a 128-token sequence through a 768×768 projection with
// bias and GELU, and 12-head self-attention over 128 tokens (head size 64).

func BenchmarkFusedMatMulBERT(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := random(rng, ir.Float32, []int64{1, 128, 768}, 1)
	w := random(rng, ir.Float32, []int64{768, 768}, 0.05)
	bias := random(rng, ir.Float32, []int64{768}, 0.1)
	attrs := at(ir.Str(attrActivation, "Gelu"))
	for b.Loop() {
		if _, err := run("FusedMatMul", attrs, x, w, bias); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAttentionBERT(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	shape := []int64{1, 12, 128, 64}
	q, k, v := random(rng, ir.Float32, shape, 1), random(rng, ir.Float32, shape, 1), random(rng, ir.Float32, shape, 1)
	mask := ir.NewTensor(ir.Float32, []int64{1, 1, 1, 128}) // BERT's additive padding mask
	for b.Loop() {
		if _, err := run("Attention", nil, q, k, v, mask); err != nil {
			b.Fatal(err)
		}
	}
}
