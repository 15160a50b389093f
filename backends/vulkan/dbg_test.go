//go:build cgo

package vulkan

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
)

func TestDbg(t *testing.T) {
	d := testDevice(t)
	for k := 0; k < 6; k++ {
		r := rand.New(rand.NewPCG(1, 2))
		b := ir.NewBuilder("c")
		x := b.Input("x", ir.Float32, ir.S(3, 7))
		y := b.Input("y", ir.Float32, ir.S(7))
		two := b.Const("two", ir.FromFloat32([]int64{}, []float32{2}))
		var out *ir.Value
		switch k {
		case 0:
			out = b.Op("Mul", x, two)
		case 1:
			out = b.Op("Neg", x)
		case 2:
			out = b.Op("Max", b.Op("Sub", x, y), b.Op("Neg", x))
		case 3:
			out = b.Op("Sub", b.Op("Abs", x), y)
		case 4:
			out = b.Op("Relu", b.Op("Mul", x, b.Const("w", randTensor(r, konst(3, 7)))))
		case 5:
			out = b.Op("Sqrt", b.Op("Add", b.Op("Abs", b.Op("Mul", x, two)), b.Const("eps", ir.FromFloat32([]int64{}, []float32{0.5}))))
		}
		b.Output("a", out)
		g, err := b.Build()
		require.NoError(t, err)
		require.NoError(t, passes.InferShapes(g))
		vals := map[*ir.Value]*ir.Tensor{x: randTensor(r, in(3, 7)), y: randTensor(r, in(7))}
		for _, c := range g.Consts {
			vals[c] = c.Const
		}
		want := reference(t, g, vals)
		got := onDevice(t, d, g, vals)
		w, gg := want[g.Outputs[0]].Float32s(), got[g.Outputs[0]].Float32s()
		t.Logf("case %d: want %v\n got %v", k, w[:4], gg[:4])
	}
}
