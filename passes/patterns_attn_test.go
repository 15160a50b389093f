package passes

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// attnSpec builds Softmax(Q·Kᵀ / √D [+ mask])·V with Q [1,2,4,8].
type attnSpec struct {
	k        string  // "transpose" (K [1,Hkv,5,8] transposed), "bshd" (K [1,5,Hkv,8], perm 0,2,3,1), "pre" (Kᵀ an input)
	hkv      int     // kv heads (0: 2)
	scale    string  // "div", "mul", "none", "input"
	c        float32 // the scale constant (0: √8 or 1/√8)
	mask     []int   // mask shape (nil: none)
	axis     int64   // Softmax axis (0: -1)
	kUsed    bool    // Kᵀ is also a graph output
	sdpa     bool    // Q and Kᵀ each scaled by 8^-1/4 (torch SDPA export)
	scoreOut bool    // the scores are also a graph output
	// where applies Where(cond, S, fill) after the scale (GPT's causal
	// mask): "causal" (cond [1,1,4,5], key j kept iff j ≤ i+1), "rows"
	// (another cond, every row keeps a key), "empty" (a row keeps none),
	// "small" (causal, but fill −1e4); fill is −FLT_MAX otherwise.
	where string
}

func buildAttn(b *ir.Builder, s attnSpec) {
	hkv := s.hkv
	if hkv == 0 {
		hkv = 2
	}
	q := b.Input("q", ir.Float32, sh(1, 2, 4, 8))
	v := b.Input("v", ir.Float32, sh(1, hkv, 5, 3))
	var kt *ir.Value
	switch s.k {
	case "bshd":
		kt = b.OpA("Transpose", at(ir.Ints("perm", 0, 2, 3, 1)), b.Input("k", ir.Float32, sh(1, 5, hkv, 8)))
	case "pre":
		kt = b.Input("kt", ir.Float32, sh(1, hkv, 8, 5))
	default:
		kt = b.OpA("Transpose", at(ir.Ints("perm", 0, 1, 3, 2)), b.Input("k", ir.Float32, sh(1, hkv, 5, 8)))
	}
	if s.kUsed {
		b.Output("kt", kt)
	}
	if s.sdpa {
		c := float32(math.Pow(8, -0.25))
		q, kt = b.Op("Mul", q, f32s(b, c)), b.Op("Mul", kt, f32s(b, c))
	}
	sc := b.Op("MatMul", q, kt)
	if s.scoreOut {
		b.Output("scores", sc)
	}
	switch s.scale {
	case "mul":
		c := s.c
		if c == 0 {
			c = float32(1 / math.Sqrt(8))
		}
		sc = b.Op("Mul", f32s(b, c), sc)
	case "input":
		sc = b.Op("Div", sc, b.Input("c", ir.Float32, sh()))
	case "none":
	default:
		c := s.c
		if c == 0 {
			c = float32(math.Sqrt(8))
		}
		sc = b.Op("Div", sc, f32s(b, c))
	}
	if s.where != "" {
		cond := ir.NewTensor(ir.Bool, []int64{1, 1, 4, 5})
		for i := 0; i < 4; i++ {
			for j := 0; j < 5; j++ {
				keep := j <= i+1
				switch s.where {
				case "rows":
					keep = (i+j)%3 != 1
				case "empty":
					keep = keep && i != 2
				}
				if keep {
					cond.Data[i*5+j] = 1
				}
			}
		}
		fill := float32(-math.MaxFloat32)
		if s.where == "small" {
			fill = -1e4
		}
		sc = b.Op("Where", b.Const("cond", cond), sc, f32s(b, fill))
	}
	if s.mask != nil {
		sc = b.Op("Add", sc, b.Input("mask", ir.Float32, sh(toAny(s.mask)...)))
	}
	axis := s.axis
	if axis == 0 {
		axis = -1
	}
	b.Output("y", b.Op("MatMul", b.OpA("Softmax", at(ir.Int("axis", axis)), sc), v))
}

func toAny(xs []int) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func attnCase(name string, s attnSpec, want ...string) rewriteCase {
	return rewriteCase{name: name, want: want, build: func(b *ir.Builder) { buildAttn(b, s) }}
}

func TestPatternsAttention(t *testing.T) {
	a := []string{"Attention"}
	runRewriteCases(t, patternsPass, []rewriteCase{
		attnCase("export form", attnSpec{mask: []int{1, 1, 4, 5}}, a...),
		attnCase("mul scale, no mask", attnSpec{scale: "mul"}, a...),
		attnCase("other scale", attnSpec{c: 3}, a...),
		attnCase("no scale", attnSpec{scale: "none", mask: []int{4, 5}}, a...),
		attnCase("K from [B,S,H,D]", attnSpec{k: "bshd", mask: []int{1, 2, 4, 5}}, "Transpose", "Attention"),
		attnCase("K pre-transposed", attnSpec{k: "pre"}, "Transpose", "Attention"),
		attnCase("grouped-query (one kv head)", attnSpec{hkv: 1}, a...),
		attnCase("Kᵀ read elsewhere", attnSpec{kUsed: true}, "Transpose", "Transpose", "Attention"),
		attnCase("torch SDPA export", attnSpec{sdpa: true, scale: "none", mask: []int{1, 1, 4, 5}}, a...),
		attnCase("SDPA with K from [B,S,H,D]", attnSpec{sdpa: true, k: "bshd", scale: "none"}, "Transpose", "Attention"),
		attnCase("causal Where (GPT export)", attnSpec{where: "causal"}, a...),
		attnCase("causal Where and an additive mask", attnSpec{where: "causal", mask: []int{1, 1, 4, 5}}, a...),
		attnCase("Where with another bool mask", attnSpec{where: "rows"}, a...),
		// negative cases
		attnCase("Where hiding a whole row", attnSpec{where: "empty"}),
		attnCase("Where filling with -1e4", attnSpec{where: "small"}),
		attnCase("bool Where and an additive mask", attnSpec{where: "rows", mask: []int{1, 1, 4, 5}}),
		attnCase("softmax over another axis", attnSpec{axis: 2}),
		attnCase("scale from an input", attnSpec{scale: "input"}),
		attnCase("scores read elsewhere", attnSpec{scoreOut: true}),
		attnCase("mask grows the scores", attnSpec{mask: []int{3, 2, 4, 5}}),
	})
	g := typedGraph(t, func(b *ir.Builder) { buildAttn(b, attnSpec{mask: []int{1, 1, 4, 5}}) })
	y := g.Outputs[0]
	require.Equal(t, Change{Fused: 5}, runPass(t, g, patternsPass)) // 6 nodes -> 1
	n := g.Nodes[0]
	require.Same(t, y, n.Outputs[0])
	require.Equal(t, []string{"q", "k", "v", "mask"}, []string{n.Inputs[0].Name, n.Inputs[1].Name, n.Inputs[2].Name, n.Inputs[3].Name})
	require.InDelta(t, 1/math.Sqrt(8), n.AttrFloat("scale", 0), 1e-7)

	g = typedGraph(t, func(b *ir.Builder) { buildAttn(b, attnSpec{where: "causal"}) })
	runPass(t, g, patternsPass)
	require.Equal(t, []string{"Attention"}, ops(g))
	require.Len(t, g.Nodes[0].Inputs, 3) // the causal rule replaces the mask
	require.Equal(t, int64(1), g.Nodes[0].AttrInt("is_causal", 0))
	g = typedGraph(t, func(b *ir.Builder) { buildAttn(b, attnSpec{where: "rows"}) })
	runPass(t, g, patternsPass)
	require.Equal(t, "cond", g.Nodes[0].Inputs[3].Name)
	require.Equal(t, int64(0), g.Nodes[0].AttrInt("is_causal", 0))

	g = typedGraph(t, func(b *ir.Builder) { buildAttn(b, attnSpec{k: "bshd"}) })
	require.Equal(t, Change{Fused: 4, Added: 1}, runPass(t, g, patternsPass)) // 5 nodes -> Transpose, Attention
	require.Equal(t, []int64{0, 2, 1, 3}, g.Nodes[0].AttrInts("perm", nil))
	require.Equal(t, "f32[1,2,5,8]", typeOf(g.Nodes[0].Outputs[0]))
}

// The head-splitting graph of golden_test.go (shapes computed at run time,
// symbolic batch and sequence) gets its attention recognized at -O2 once
// folding has made the scale a constant, and computes the same as at -O0.
func TestPatternsAttentionDynamic(t *testing.T) {
	g0, g2 := attention(t), attention(t)
	_, err := Run(g0, Options{Level: 0, Verify: true})
	require.NoError(t, err)
	_, err = Run(g2, Options{Level: 2, Verify: true, Eval: fuseEvalNode})
	require.NoError(t, err)
	require.Contains(t, ops(g2), "Attention")
	require.NotContains(t, ops(g2), "Softmax")
	sameOutputs(t, g0, g2)
}
