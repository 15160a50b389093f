package model

import (
	"math"
	"math/rand/v2"

	"github.com/weftrt/weft/ir"
)

// Sizes of the example network.
const (
	Batch  = 4
	In     = 16
	Hidden = 32
	Out    = 10
)

// Build returns the MLP graph. Weights are drawn from a PCG generator with
// a fixed seed, so every build is identical: uniform in ±sqrt(6/fan-in),
// twice that in the last layer so that the softmax is not flat.
func Build() (*ir.Graph, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := ir.NewBuilder("mlp")
	x := b.Input("x", ir.Float32, ir.S(Batch, In))
	w1 := b.Const("w1", uniform(rng, []int64{In, Hidden}, math.Sqrt(6.0/In)))
	b1 := b.Const("b1", uniform(rng, []int64{Hidden}, 0.1))
	w2 := b.Const("w2", uniform(rng, []int64{Hidden, Out}, 2*math.Sqrt(6.0/Hidden)))
	b2 := b.Const("b2", uniform(rng, []int64{Out}, 0.1))
	h := b.Op("Relu", b.Op("Add", b.Op("MatMul", x, w1), b1))
	logits := b.Op("Add", b.Op("MatMul", h, w2), b2)
	b.Output("probs", b.OpA("Softmax", []ir.AttrOption{ir.Int("axis", -1)}, logits))
	return b.Build()
}

// Input returns the example input x: a fixed, seeded f32[Batch,In] tensor
// in [-1, 1).
func Input() *ir.Tensor {
	return uniform(rand.New(rand.NewPCG(3, 4)), []int64{Batch, In}, 1)
}

func uniform(rng *rand.Rand, shape []int64, scale float64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, scale*(2*rng.Float64()-1))
	}
	return t
}
