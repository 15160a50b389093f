package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// BenchmarkAttentionShapes times the Attention kernel on the zoo models'
// shapes: BERT-base (12 heads × 128 × 64, additive mask) and GPT-6l
// (8 heads × 64 × 64, causal).
func BenchmarkAttentionShapes(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name  string
		in    []*ir.Tensor
		attrs []ir.AttrOption
	}{
		{"bert", []*ir.Tensor{randF32(r, 1, 12, 128, 64), randF32(r, 1, 12, 128, 64), randF32(r, 1, 12, 128, 64), randF32(r, 1, 1, 1, 128)}, nil},
		{"gpt", []*ir.Tensor{randF32(r, 1, 8, 64, 64), randF32(r, 1, 8, 64, 64), randF32(r, 1, 8, 64, 64)}, []ir.AttrOption{ir.Int("is_causal", 1)}},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(b *testing.B) {
				n := node("Attention", c.attrs, c.in)
				spec := &nodeSpec{n: n, pool: poolFor(threads)}
				for _, t := range c.in {
					spec.in = append(spec.in, arg{dt: t.DType, shape: t.Shape, ok: true})
				}
				out := []*ir.Tensor{ir.NewTensor(ir.Float32, c.in[0].Shape)}
				spec.out = []arg{{dt: ir.Float32, shape: out[0].Shape, ok: true}}
				k := build(n.Op, spec)
				if k == nil {
					b.Fatal("no kernel")
				}
				scratch := ir.AlignedBytes(spec.scratch)
				for b.Loop() {
					if err := k(c.in, out, scratch); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestBinRowAddInPlace checks the vector Add path of binRow when the
// output is either operand, on lengths with every tail.
func TestBinRowAddInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 7, 15, 17, 63, 129} {
		a, b := randF32(r, int64(n)).Float32s(), randF32(r, int64(n)).Float32s()
		want := make([]float32, n)
		for i := range want {
			want[i] = a[i] + b[i]
		}
		for _, into := range []string{"a", "b", "new"} {
			x, z := append([]float32(nil), a...), append([]float32(nil), b...)
			y := make([]float32, n)
			switch into {
			case "a":
				y = x
			case "b":
				y = z
			}
			binRow(opAdd, y, x, z, 1, 1)
			for i := range want {
				if y[i] != want[i] {
					t.Fatalf("n=%d into %s: y[%d] = %g, want %g", n, into, i, y[i], want[i])
				}
			}
		}
	}
}
