//go:build cgo

package vulkan_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/vulkan"
	"github.com/weftrt/weft/ir"
)

// mlp is x[4,16] → MatMul → Add → Relu → MatMul → Add → Softmax.
func mlp(t *testing.T) *ir.Graph {
	r := rand.New(rand.NewPCG(3, 4))
	randT := func(shape ...int64) *ir.Tensor {
		v := make([]float32, ir.NumElements(shape))
		for i := range v {
			v[i] = float32(r.Float64()*2 - 1)
		}
		return ir.FromFloat32(shape, v)
	}
	b := ir.NewBuilder("mlp")
	x := b.Input("x", ir.Float32, ir.S(4, 16))
	h := b.Op("Relu", b.Op("Add", b.Op("MatMul", x, b.Const("w1", randT(16, 32))), b.Const("b1", randT(32))))
	y := b.Op("Softmax", b.Op("Add", b.Op("MatMul", h, b.Const("w2", randT(32, 8))), b.Const("b2", randT(8))))
	b.Output("y", y)
	g, err := b.Build()
	require.NoError(t, err)
	return g
}

func TestWholeGraphPinnedToVulkan(t *testing.T) {
	b, ok := backends.Get(vulkan.BackendName)
	require.True(t, ok, "importing the package registers the backend")
	devs, err := b.Devices()
	require.NoError(t, err)
	if len(devs) == 0 {
		if os.Getenv("WEFT_REQUIRE_VULKAN") == "1" {
			t.Fatalf("WEFT_REQUIRE_VULKAN=1 but there is no Vulkan device: %s", vulkan.Unavailable())
		}
		t.Skipf("no Vulkan device, skipping: %s", vulkan.Unavailable())
	}
	x := ir.NewTensor(ir.Float32, []int64{4, 16})
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(math.Sin(float64(i)))
	}
	in := map[string]*ir.Tensor{"x": x}
	for _, level := range []int{0, 2} {
		cpu, err := weft.New(mlp(t), weft.Options{OptLevel: level})
		require.NoError(t, err)
		for _, p := range cpu.Plan.Partitions {
			require.Equal(t, "cpu", p.Device, "without pins everything stays on the CPU")
		}
		want, err := cpu.Run(context.Background(), in)
		require.NoError(t, err)

		pins := map[string]string{"MatMul": "vulkan:0", "FusedMatMul": "vulkan:0"}
		gpu, err := weft.New(mlp(t), weft.Options{OptLevel: level, Pins: pins})
		require.NoError(t, err, "-O%d", level)
		onVulkan := 0
		for _, p := range gpu.Plan.Partitions {
			if p.Device == "vulkan:0" {
				onVulkan += len(p.Nodes)
			}
		}
		require.Positive(t, onVulkan, "-O%d: nothing ran on vulkan:0:\n%s", level, gpu.Plan.Text())
		got, err := gpu.Run(context.Background(), in)
		require.NoError(t, err)
		w, g := want["y"].Float32s(), got["y"].Float32s()
		require.Len(t, g, len(w))
		for i := range w {
			require.InDelta(t, w[i], g[i], 1e-5, "-O%d: y[%d]", level, i)
		}
		t.Logf("-O%d: %d nodes on vulkan:0\n%s", level, onVulkan, gpu.Plan.Text())
	}
}
