package passes

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// fuseRandomGraph builds a random DAG of elementwise ops, MatMuls with bias and
// the exported forms of SiLU and GELU, whose intermediates later nodes may
// read again (so that single-use checks matter), with random extra outputs.
func fuseRandomGraph(seed uint64) func(b *ir.Builder) {
	return func(b *ir.Builder) {
		rng := rand.New(rand.NewPCG(seed, 11))
		vals := []*ir.Value{b.Input("x", ir.Float32, sh(3, 4)), b.Input("y", ir.Float32, sh(3, 4)), b.Input("z", ir.Float32, sh(4))}
		pick := func() *ir.Value { return vals[rng.IntN(len(vals))] }
		unary := []string{"Neg", "Tanh", "Sigmoid", "Abs", "Relu", "Sin", "Gelu"}
		binary := []string{"Add", "Sub", "Mul", "Max", "Min"}
		for i := 0; i < 14; i++ {
			var v *ir.Value
			switch k := rng.IntN(10); {
			case k < 3:
				v = b.Op(unary[rng.IntN(len(unary))], pick())
			case k < 6:
				v = b.Op(binary[rng.IntN(len(binary))], pick(), pick())
			case k == 6:
				a := pick()
				s := b.Op("Sigmoid", a)
				vals = append(vals, s)
				v = b.Op("Mul", a, s)
			case k == 7:
				a := pick()
				e := b.Op("Add", b.Op("Erf", b.Op("Div", a, f32s(b, 1.4142135))), f32s(b, 1))
				vals = append(vals, e)
				v = b.Op("Mul", b.Op("Mul", a, e), f32s(b, 0.5))
			default:
				a := pick()
				if len(a.Shape) != 2 {
					a = b.Op("Add", a, vals[0])
				}
				w := b.Const("", ramp([]int64{4, 4}, -0.5, 0.07))
				m := b.Op("MatMul", a, w)
				vals = append(vals, m)
				v = b.Op("Add", m, b.Const("", ramp([]int64{4}, 0.1, -0.05)))
			}
			vals = append(vals, v)
		}
		b.Output("out", vals[len(vals)-1])
		for i := 0; i < 2; i++ {
			if v := vals[3+rng.IntN(len(vals)-3)]; v.Name == "" {
				b.Output(fmt.Sprintf("extra%d", i), v)
			}
		}
	}
}

// Random graphs through patterns and fuse: valid, typed, same outputs.
func TestPatternsFuseRandom(t *testing.T) {
	fused := 0
	for seed := uint64(0); seed < 60; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			build := fuseRandomGraph(seed)
			before, after := typedGraph(t, build), typedGraph(t, build)
			ch := runPass(t, after, patternsPass)
			ch.Add(runPass(t, after, fusePass))
			require.NoError(t, ir.VerifyTyped(after))
			require.Equal(t, len(before.Nodes)-len(after.Nodes), ch.Fused+ch.Removed-ch.Added)
			fused += ch.Fused
			sameOutputs(t, before, after)
		})
	}
	require.Greater(t, fused, 100)
}
