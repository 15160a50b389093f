//go:build cgo

package vulkan_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/frontend/gguf"
	"github.com/weftrt/weft/frontend/llama"
	"github.com/weftrt/weft/ir"
)

// tinyLlama builds a random two-layer llama (adjacent RoPE pairs) or qwen2
// (NeoX pairs, q/k/v biases) prefill graph with dt weights, through GGUF.
func tinyLlama(t *testing.T, neox bool, dt ir.DType) *ir.Graph {
	t.Helper()
	cfg := llama.Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 270, MaxSeq: 16,
		RopeTheta: 10000, NormEps: 1e-5, RopeNeoX: neox, AttnBias: neox}
	w, err := llama.RandomGGUF(cfg, dt, 3)
	require.NoError(t, err)
	b, err := w.Bytes()
	require.NoError(t, err)
	f, err := gguf.Parse(b)
	require.NoError(t, err)
	cfg, wt, err := llama.FromGGUF(f)
	require.NoError(t, err)
	g, err := llama.Build(cfg, wt, llama.Mode{Seq: 3, Capacity: 8, Ungrouped: true}) // QMatMulGroup has no shader: keep the QMatMuls
	require.NoError(t, err)
	return g
}

// TestMixedLlama runs quantized llama and qwen2 graphs with QMatMul and
// RotaryEmbedding (or every supported node) on Vulkan and compares with
// the reference kernels.
func TestMixedLlama(t *testing.T) {
	vk := vulkanDevice(t)
	for _, neox := range []bool{false, true} {
		for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0} {
			name := fmt.Sprintf("neox=%v/%v", neox, dt)
			// The oracle is the reference evaluator: the CPU backend's fast
			// QMatMul quantizes the activations to q8 blocks, the shader does not.
			g := tinyLlama(t, neox, dt)
			in := feeds(g)
			ins := make([]*ir.Tensor, len(g.Inputs))
			for i, v := range g.Inputs {
				ins[i] = in[v.Name]
			}
			outs, err := ref.RunGraph(context.Background(), g, nil, ins)
			require.NoError(t, err, name)
			want := map[string]*ir.Tensor{}
			for i, v := range g.Outputs {
				want[v.Name] = outs[i]
			}
			for _, rs := range [][]string{{"QMatMul=vulkan", "RotaryEmbedding=vulkan"}, {"*=vulkan"}} {
				m, err := weft.New(tinyLlama(t, neox, dt), weft.Options{OptLevel: 2, Target: []string{"cpu", "vulkan"}, Place: rs})
				require.NoError(t, err, "%s %v", name, rs)
				ops := map[string]int{}
				for _, p := range m.Plan.Partitions {
					if p.Device == vk.Name() {
						for _, n := range p.Nodes {
							ops[n.Op]++
						}
					}
				}
				require.Positive(t, ops["QMatMul"], "%s %v: no QMatMul on Vulkan (%v)", name, rs, ops)
				require.Positive(t, ops["RotaryEmbedding"], "%s %v: no RotaryEmbedding on Vulkan (%v)", name, rs, ops)
				got, err := m.Run(context.Background(), in)
				require.NoError(t, err, "%s %v", name, rs)
				requireAllClose(t, want, got, 1e-4, name)
				t.Logf("%s %v: on %s: %v", name, rs, vk.Name(), ops)
			}
		}
	}
}
