//go:build cgo

package vulkan_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
)

// TestFusedChains compiles elementwise chains that -O2 fuses into Fused
// nodes (a body graph with small constants inlined) and runs them on
// Vulkan against the CPU.
func TestFusedChains(t *testing.T) {
	vk := vulkanDevice(t)
	r := rand.New(rand.NewPCG(8, 9))
	randT := func(lo, hi float64, shape ...int64) *ir.Tensor {
		v := make([]float32, ir.NumElements(shape))
		for i := range v {
			v[i] = float32(lo + (hi-lo)*r.Float64())
		}
		return ir.FromFloat32(shape, v)
	}
	w := randT(-1, 1, 3, 7) // one weight for both builds
	build := func() *ir.Graph {
		b := ir.NewBuilder("chains")
		x := b.Input("x", ir.Float32, ir.S(3, 7))
		y := b.Input("y", ir.Float32, ir.S(7))
		two := b.Const("two", ir.FromFloat32([]int64{}, []float32{2}))
		h := b.Op("Sqrt", b.Op("Add", b.Op("Abs", b.Op("Mul", x, two)), b.Const("eps", ir.FromFloat32([]int64{}, []float32{0.5}))))
		k := b.Op("Max", b.Op("Sub", h, y), b.Op("Neg", x))
		b.Output("a", b.Op("Relu", b.Op("Mul", k, b.Const("w", w))))
		b.Output("b", b.Op("Log", b.Op("Add", b.Op("Exp", y), two)))
		g, err := b.Build()
		require.NoError(t, err)
		return g
	}
	in := map[string]*ir.Tensor{"x": randT(-3, 3, 3, 7), "y": randT(-1, 1, 7)}
	cpu, err := weft.New(build(), weft.Options{OptLevel: 0, Target: []string{"cpu"}})
	require.NoError(t, err)
	want, err := cpu.Run(context.Background(), in)
	require.NoError(t, err)
	m, err := weft.New(build(), weft.Options{OptLevel: 2, Target: []string{"cpu", "vulkan"}, Place: []string{"*=vulkan"}})
	require.NoError(t, err)
	fused := 0
	for _, p := range m.Plan.Partitions {
		require.Equal(t, vk.Name(), p.Device, "everything runs on Vulkan:\n%s", m.Plan.Text())
		for _, n := range p.Nodes {
			if n.Op == "Fused" {
				fused++
			}
		}
	}
	require.Positive(t, fused, "no Fused node:\n%s", m.Plan.Text())
	got, err := m.Run(context.Background(), in)
	require.NoError(t, err)
	for name, w := range want {
		g := got[name]
		require.NotNil(t, g, name)
		for i := 0; i < w.Len(); i++ {
			require.InDelta(t, w.Float64(i), g.Float64(i), 1e-5*(1+math.Abs(w.Float64(i))), "%s[%d]", name, i)
		}
	}
}
