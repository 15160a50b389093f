//go:build cgo

package vulkan_test

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/vulkan"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime"
	"github.com/weftrt/weft/scheduler"
	"github.com/weftrt/weft/zoo"
)

// vulkanDevice returns the first Vulkan device, skipping the test without
// one (failing it when WEFT_REQUIRE_VULKAN=1).
func vulkanDevice(t *testing.T) backends.Device {
	t.Helper()
	b, ok := backends.Get(vulkan.BackendName)
	require.True(t, ok)
	devs, err := b.Devices()
	require.NoError(t, err)
	if len(devs) == 0 {
		if os.Getenv("WEFT_REQUIRE_VULKAN") == "1" {
			t.Fatalf("WEFT_REQUIRE_VULKAN=1 but there is no Vulkan device: %s", vulkan.Unavailable())
		}
		t.Skipf("no Vulkan device, skipping: %s", vulkan.Unavailable())
	}
	return devs[0]
}

// tinyModels are zoo-style blocks small enough for a unit test: a ResNet
// (Conv, BatchNorm folded at -O2, Relu, residual Add, pooling, Gemm) and a
// BERT encoder layer (embeddings, FusedMatMul, Attention with an additive
// mask, LayerNormalization, Gelu).
func tinyModels(t *testing.T) map[string]func() *ir.Graph {
	return map[string]func() *ir.Graph{
		"resnet": func() *ir.Graph {
			g, err := zoo.ResNet(zoo.ResNetConfig{Blocks: []int{1, 1}, Width: 4, Batch: 1, ImageSize: 12, Classes: 5, Seed: 3})
			require.NoError(t, err)
			return g
		},
		"bert": func() *ir.Graph {
			g, err := zoo.BERT(zoo.TransformerConfig{Layers: 1, Hidden: 16, Heads: 2, FFN: 24, Seq: 5, Vocab: 30, Batch: 2,
				MaxPositions: 8, TypeVocab: 2, Eps: 1e-12, AttentionMask: true, Seed: 5})
			require.NoError(t, err)
			return g
		},
	}
}

// feeds makes deterministic inputs for g: floats in [-1,1), integers in
// [0,3), masks of ones with the last position of the last row off.
func feeds(g *ir.Graph) map[string]*ir.Tensor {
	in := map[string]*ir.Tensor{}
	for _, v := range g.Inputs {
		shape := v.Shape.Ints()
		t := ir.NewTensor(v.DType, shape)
		for i := 0; i < t.Len(); i++ {
			switch {
			case v.DType == ir.Int64:
				t.SetFloat64(i, float64(i*7%3))
			case v.Name == "attention_mask":
				t.SetFloat64(i, 1)
				if i == t.Len()-1 {
					t.SetFloat64(i, 0)
				}
			default:
				t.SetFloat64(i, math.Sin(float64(i)*0.37))
			}
		}
		in[v.Name] = t
	}
	return in
}

func requireAllClose(t *testing.T, want, got map[string]*ir.Tensor, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for name, w := range want {
		g := got[name]
		require.NotNil(t, g, "%s: output %s", what, name)
		require.Equal(t, w.Shape, g.Shape, "%s: output %s", what, name)
		for i := 0; i < w.Len(); i++ {
			a, b := w.Float64(i), g.Float64(i)
			require.LessOrEqual(t, math.Abs(a-b), tol*(1+math.Abs(a)), "%s: output %s[%d]: cpu %v, mixed %v", what, name, i, a, b)
		}
	}
}

// TestMixedPlans runs the tiny models with some or all of their nodes on
// Vulkan and the rest on the CPU, and compares with the CPU alone.
func TestMixedPlans(t *testing.T) {
	vk := vulkanDevice(t)
	rules := [][]string{{"MatMul=vulkan", "FusedMatMul=vulkan"}, {"*=vulkan"}, {"*=vulkan", "Add=cpu"}, {"Softmax=vulkan", "Relu=vulkan", "LayerNormalization=vulkan"}}
	for name, build := range tinyModels(t) {
		for _, level := range []int{0, 2} {
			cpu, err := weft.New(build(), weft.Options{OptLevel: level, Target: []string{"cpu"}})
			require.NoError(t, err)
			in := feeds(cpu.Graph)
			want, err := cpu.Run(context.Background(), in)
			require.NoError(t, err)
			for _, rs := range rules {
				m, err := weft.New(build(), weft.Options{OptLevel: level, Target: []string{"cpu", "vulkan"}, Place: rs})
				require.NoError(t, err, "%s -O%d %v", name, level, rs)
				on := 0
				for _, p := range m.Plan.Partitions {
					if p.Device == vk.Name() {
						on += len(p.Nodes)
					}
				}
				got, err := m.Run(context.Background(), in)
				require.NoError(t, err, "%s -O%d %v", name, level, rs)
				requireAllClose(t, want, got, 1e-4, name)
				t.Logf("%s -O%d %v: %d nodes on %s, %d partitions", name, level, rs, on, vk.Name(), len(m.Plan.Partitions))
				if rs[0] == "*=vulkan" {
					require.Positive(t, on, "%s -O%d: nothing ran on Vulkan", name, level)
				}
			}
		}
	}
}

// deviceMemory hides that a device's buffers are host-visible, as a
// discrete GPU's are not, so that the scheduler inserts Transfer nodes.
type deviceMemory struct{ backends.Device }

func (deviceMemory) HostVisible() bool { return false }

// TestMixedPlansWithTransfers schedules with the Vulkan device seen as
// not host-visible: values crossing devices go through Transfer nodes,
// which must run (or be absorbed) and leave the results unchanged.
func TestMixedPlansWithTransfers(t *testing.T) {
	vk := deviceMemory{vulkanDevice(t)}
	cpuDevs, err := weft.Devices(weft.Options{Target: []string{"cpu"}})
	require.NoError(t, err)
	devs := append(cpuDevs, vk)
	for name, build := range tinyModels(t) {
		cpu, err := weft.New(build(), weft.Options{OptLevel: 2, Target: []string{"cpu"}})
		require.NoError(t, err)
		in := feeds(cpu.Graph)
		want, err := cpu.Run(context.Background(), in)
		require.NoError(t, err)
		for _, rs := range [][]string{{"*=vulkan"}, {"MatMul=vulkan", "FusedMatMul=vulkan"}} {
			g := build()
			_, err := weft.Optimize(g, weft.Options{OptLevel: 2})
			require.NoError(t, err)
			rules, err := scheduler.ParseRules(rs)
			require.NoError(t, err)
			p, rep, err := scheduler.ScheduleReport(g, scheduler.Options{Devices: devs, Rules: rules})
			require.NoError(t, err)
			require.Positive(t, rep.Transfers, "%s %v: no transfers:\n%s", name, rs, p.Text())
			require.Positive(t, rep.TransferBytes)
			s, err := runtime.NewSession(p, devs)
			require.NoError(t, err)
			got, err := s.Run(context.Background(), in)
			require.NoError(t, err)
			requireAllClose(t, want, got, 1e-4, name)
			t.Logf("%s %v: %d transfers, %d bytes", name, rs, rep.Transfers, rep.TransferBytes)
		}
	}
}
