//go:build cgo

package vulkan_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/vulkan"
	"github.com/weftrt/weft/ir"
)

// TestSessionRunsInArenasAndCloses runs a plan on Vulkan through the
// runtime: the session's run state holds one device arena, later runs
// allocate no device memory (also with concurrent runs, each with its own
// state), and Model.Close gives every buffer and command state back.
func TestSessionRunsInArenasAndCloses(t *testing.T) {
	vk := vulkanDevice(t)
	_, live0, cmds0, ok := vulkan.MemoryStats(vk)
	require.True(t, ok)
	m, err := weft.New(mlp(t), weft.Options{Target: []string{"cpu", "vulkan"}, Place: []string{"*=vulkan"}})
	require.NoError(t, err)
	cpu, err := weft.New(mlp(t), weft.Options{Target: []string{"cpu"}})
	require.NoError(t, err)
	defer cpu.Close()
	hasArena := false
	for _, a := range m.Plan.Arenas {
		hasArena = hasArena || a.Device == vk.Name()
	}
	require.True(t, hasArena, "the plan has an arena on %s:\n%s", vk.Name(), m.Plan.Text())

	x := ir.NewTensor(ir.Float32, []int64{4, 16})
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(math.Cos(float64(i) * 0.3))
	}
	want, err := cpu.Run(context.Background(), map[string]*ir.Tensor{"x": x})
	require.NoError(t, err)
	out := ir.NewTensor(ir.Float32, []int64{4, 8})
	run := func() {
		require.NoError(t, m.RunInto(context.Background(), []*ir.Tensor{x}, []*ir.Tensor{out}))
		for i, w := range want["y"].Float32s() {
			require.InDelta(t, w, out.Float32s()[i], 1e-5, "y[%d]", i)
		}
	}
	run()
	allocs, _, _, _ := vulkan.MemoryStats(vk)
	for range 20 {
		run()
	}
	after, _, _, _ := vulkan.MemoryStats(vk)
	require.Equal(t, allocs, after, "20 runs after the first allocated device memory")

	// Concurrent runs: each gets a run state (arena included) of its own.
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				got, err := m.Run(context.Background(), map[string]*ir.Tensor{"x": x})
				if err != nil {
					t.Error(err)
					return
				}
				for i, w := range want["y"].Float32s() {
					if math.Abs(float64(w-got["y"].Float32s()[i])) > 1e-5 {
						t.Errorf("y[%d]: got %v, want %v", i, got["y"].Float32s()[i], w)
						return
					}
				}
			}
		}()
	}
	wg.Wait()

	require.NoError(t, m.Close())
	_, live, cmds, _ := vulkan.MemoryStats(vk)
	require.Equal(t, live0, live, "device allocations still live after Close")
	require.Equal(t, cmds0, cmds, "command states still live after Close")
	_, err = m.Run(context.Background(), map[string]*ir.Tensor{"x": x})
	require.ErrorContains(t, err, "closed")
	require.NoError(t, m.Close(), "a second Close is a no-op")
}

// TestPlanFilePipelineCache: opening a compiled plan writes the Vulkan
// pipeline cache beside it, and the next open loads it.
func TestPlanFilePipelineCache(t *testing.T) {
	vk := vulkanDevice(t)
	require.Implements(t, (*backends.CacheFiler)(nil), vk)
	opts := weft.Options{Target: []string{"cpu", "vulkan"}, Place: []string{"*=vulkan"}}
	m, err := weft.New(mlp(t), opts)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "mlp.wplan")
	require.NoError(t, weft.SavePlan(path, m.Plan, opts, "mlp"))
	require.NoError(t, m.Close())
	cache := vulkan.CachePath(path, vk.Name())
	_, err = os.Stat(cache)
	require.ErrorIs(t, err, os.ErrNotExist, "compiling in memory writes no cache")

	first, err := weft.OpenPlan(path, weft.Options{})
	require.NoError(t, err)
	_, note, _ := vulkan.PipelineCache(vk)
	require.Contains(t, note, "no pipeline cache")
	require.NoError(t, first.Close())
	st, err := os.Stat(cache)
	require.NoError(t, err, "the first open saves the cache")
	require.Positive(t, st.Size())

	second, err := weft.OpenPlan(path, weft.Options{})
	require.NoError(t, err)
	defer second.Close()
	loaded, note, _ := vulkan.PipelineCache(vk)
	require.Contains(t, note, "loaded")
	require.Positive(t, loaded, "the second open merges the saved cache")
	t.Log(note)
}

// TestCapabilities: the device states its storage and arithmetic
// precision through the plugin API.
func TestCapabilities(t *testing.T) {
	vk := vulkanDevice(t)
	cr, ok := vk.(backends.CapabilityReporter)
	require.True(t, ok)
	c := cr.Capabilities()
	info, q, _ := vulkan.DeviceInfo(vk)
	require.Contains(t, c.Storage, ir.Float32)
	require.Contains(t, c.Arith, ir.Float32)
	require.Equal(t, q.F16Storage, contains(c.Storage, ir.Float16))
	require.Equal(t, q.F16Arith, contains(c.Arith, ir.Float16))
	require.Positive(t, c.MaxBufferBytes)
	t.Logf("%s: storageBuffer16BitAccess %v, shaderFloat16 %v → storage %v, arithmetic %v, notes %v",
		info.Name, info.Storage16Bit, info.ShaderFloat16, c.Storage, c.Arith, c.Notes)
}

func contains(ds []ir.DType, d ir.DType) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

// TestF16GraphOnVulkan runs an f16 model (MatMul → MatMul, f16 weights)
// pinned to Vulkan through the scheduler, the runtime and the plan arenas
// (2-byte elements at planned offsets). The reference is float64 from the
// same f16 values, and the bound is f16_test.go's worst case for f16 tile
// arithmetic carried through both layers, with u = 2⁻¹¹:
// e_h ≤ 17·u·S₁ + u·|h| for the hidden layer (S₁ = Σ|x·w₁|), then
// e_y ≤ Σ_k e_h,k·|w₂| + 17·u·S₂ + u·|y| (S₂ = Σ|h·w₂|), which also covers
// the f32-arithmetic path. The CPU's f16 result is logged for comparison.
func TestF16GraphOnVulkan(t *testing.T) {
	vk := vulkanDevice(t)
	if _, q, _ := vulkan.DeviceInfo(vk); !q.F16Storage {
		t.Skipf("%s has no f16 storage", vk.Name())
	}
	const M, K, H, N = 6, 24, 16, 5
	half := func(shape []int64, f func(i int) float64) *ir.Tensor {
		h := ir.NewTensor(ir.Float16, shape)
		for i := 0; i < h.Len(); i++ {
			h.SetFloat64(i, f(i))
		}
		return h
	}
	xt := half([]int64{M, K}, func(i int) float64 { return math.Sin(float64(i)*0.37) * 0.9 })
	w1 := half([]int64{K, H}, func(i int) float64 { return math.Sin(float64(i) * 0.7) })
	w2 := half([]int64{H, N}, func(i int) float64 { return math.Cos(float64(i) * 0.3) })
	build := func() *ir.Graph {
		b := ir.NewBuilder("f16mlp")
		x := b.Input("x", ir.Float16, ir.S(M, K))
		b.Output("y", b.Op("MatMul", b.Op("MatMul", x, b.Const("w1", w1)), b.Const("w2", w2)))
		g, err := b.Build()
		require.NoError(t, err)
		return g
	}
	const u = 1.0 / 2048
	want, bound := make([]float64, M*N), make([]float64, M*N)
	for i := 0; i < M; i++ {
		h, eh := make([]float64, H), make([]float64, H)
		for k := 0; k < H; k++ {
			s1 := 0.0
			for j := 0; j < K; j++ {
				p := xt.Float64(i*K+j) * w1.Float64(j*H+k)
				h[k] += p
				s1 += math.Abs(p)
			}
			eh[k] = 17*u*s1 + u*math.Abs(h[k])
		}
		for n := 0; n < N; n++ {
			s2, prop := 0.0, 0.0
			for k := 0; k < H; k++ {
				p := h[k] * w2.Float64(k*N+n)
				want[i*N+n] += p
				s2 += math.Abs(p) + eh[k]*math.Abs(w2.Float64(k*N+n))
				prop += eh[k] * math.Abs(w2.Float64(k*N+n))
			}
			bound[i*N+n] = prop + 17*u*s2 + u*math.Abs(want[i*N+n]) + 0x1p-24
		}
	}
	in := map[string]*ir.Tensor{"x": xt}
	cpu, err := weft.New(build(), weft.Options{Target: []string{"cpu"}})
	require.NoError(t, err)
	defer cpu.Close()
	onCPU, err := cpu.Run(context.Background(), in)
	require.NoError(t, err)
	m, err := weft.New(build(), weft.Options{OptLevel: 0, Target: []string{"cpu", "vulkan"}, Place: []string{"*=vulkan"}})
	require.NoError(t, err)
	defer m.Close()
	on := 0
	for _, p := range m.Plan.Partitions {
		if p.Device == vk.Name() {
			on += len(p.Nodes)
		}
	}
	require.Equal(t, 2, on, "both f16 MatMuls on %s:\n%s", vk.Name(), m.Plan.Text())
	for range 2 { // the second run replays the recorded state
		got, err := m.Run(context.Background(), in)
		require.NoError(t, err)
		require.Equal(t, ir.Float16, got["y"].DType)
		worst, cpuWorst, top := 0.0, 0.0, 0.0
		for i, w := range want {
			g := got["y"].Float64(i)
			require.LessOrEqual(t, math.Abs(g-w), bound[i], "y[%d]: got %v, want %v", i, g, w)
			worst, top = max(worst, math.Abs(g-w)), max(top, math.Abs(w))
			cpuWorst = max(cpuWorst, math.Abs(onCPU["y"].Float64(i)-w))
		}
		t.Logf("f16 MLP on %s: largest error %.3g (CPU: %.3g), |y| up to %.3g", vk.Name(), worst, cpuWorst, top)
	}
}
