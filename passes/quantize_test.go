package passes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// gauss adds a constant of N(0, sigma²) values.
func gauss(b *ir.Builder, name string, dt ir.DType, seed uint64, sigma float64, dims ...int64) *ir.Value {
	rng := rand.New(rand.NewPCG(seed, 13))
	t := ir.NewTensor(dt, dims)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, rng.NormFloat64()*sigma)
	}
	return b.Const(name, t)
}

// mlp: x[batch,64] → fc1 (64→128) +b, Relu → fc2 (128→96) +b, Relu → fc3 (96→10).
func buildMLP(b *ir.Builder) {
	x := b.Input("x", ir.Float32, sh("batch", 64))
	h := b.Op("Relu", b.Op("Add", named(b.Op("MatMul", x, gauss(b, "fc1.weight", ir.Float32, 1, 0.1, 64, 128)), "fc1"),
		gauss(b, "fc1.bias", ir.Float32, 2, 0.1, 128)))
	h = b.Op("Relu", b.Op("Add", named(b.Op("MatMul", h, gauss(b, "fc2.weight", ir.Float32, 3, 0.1, 128, 96)), "fc2"),
		gauss(b, "fc2.bias", ir.Float32, 4, 0.1, 96)))
	b.Output("y", named(b.Op("MatMul", h, gauss(b, "fc3.weight", ir.Float32, 5, 0.1, 96, 10)), "fc3"))
}

// transformer: one decoder layer with an embedding, single-head attention
// (q, k, v, o projections, residual), a SwiGLU feed-forward block written
// out as gate·sigmoid(gate)·up (down projection, residual) and an LM head.
func buildTransformer(b *ir.Builder) {
	const d, ff, vocab = 64, 128, 50
	ids := b.Input("ids", ir.Int64, sh(5))
	h := b.Op("Gather", gauss(b, "embed", ir.Float32, 1, 1, vocab, d), ids) // [5, 64]
	proj := func(x *ir.Value, name string, seed uint64, k, n int64) *ir.Value {
		return named(b.Op("MatMul", x, gauss(b, name, ir.Float32, seed, 1/math.Sqrt(float64(k)), k, n)), name)
	}
	q, k, v := proj(h, "wq", 2, d, d), proj(h, "wk", 3, d, d), proj(h, "wv", 4, d, d)
	scores := b.Op("Mul", b.Op("MatMul", q, b.OpA("Transpose", at(ir.Ints("perm", 1, 0)), k)), f32s(b, 0.125))
	att := b.Op("MatMul", b.OpA("Softmax", at(ir.Int("axis", -1)), scores), v)
	h2 := b.Op("Add", h, proj(att, "wo", 5, d, d))
	gate, up := proj(h2, "w_gate", 6, d, ff), proj(h2, "w_up", 7, d, ff)
	act := b.Op("Mul", b.Op("Mul", gate, b.Op("Sigmoid", gate)), up)
	h3 := b.Op("Add", h2, proj(act, "w_down", 8, ff, d))
	b.Output("logits", proj(h3, "lm_head", 9, d, vocab))
}

func built(t *testing.T, build func(b *ir.Builder)) *ir.Graph {
	t.Helper()
	b := ir.NewBuilder("t")
	build(b)
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, InferShapes(g))
	return g
}

// quantized lists the weights a report quantized, and the reasons of the others.
func quantized(reps []QuantReport) (names []string, skipped map[string]string) {
	skipped = map[string]string{}
	for _, r := range reps {
		if r.Skipped == "" {
			names = append(names, r.Weight)
		} else {
			skipped[r.Weight] = r.Skipped
		}
	}
	return names, skipped
}

func TestQuantizePolicies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		build   func(b *ir.Builder)
		opts    QuantizeOptions
		want    []string
		skipped map[string]string
	}{
		{"mlp default", buildMLP, QuantizeOptions{Type: "q4_0"}, []string{"fc1.weight", "fc2.weight"},
			map[string]string{"fc3.weight": "head (last weight before a model output)"}},
		{"mlp all", buildMLP, QuantizeOptions{Type: "q4_0", Policy: "all"}, []string{"fc1.weight", "fc2.weight", "fc3.weight"}, map[string]string{}},
		{"mlp ffn-only", buildMLP, QuantizeOptions{Type: "q8_0", Policy: "ffn-only"}, []string{"fc1.weight", "fc2.weight", "fc3.weight"}, map[string]string{}},
		{"mlp list", buildMLP, QuantizeOptions{Type: "int8-per-channel", Layers: []string{"fc2.weight", "fc3"}}, []string{"fc2.weight", "fc3.weight"},
			map[string]string{"fc1.weight": "not in the layer list"}},
		{"transformer default", buildTransformer, QuantizeOptions{Type: "q4_0", Policy: PolicyDefault},
			[]string{"wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down"}, map[string]string{"lm_head": "head (last weight before a model output)"}},
		{"transformer ffn-only", buildTransformer, QuantizeOptions{Type: "q4_0", Policy: "ffn-only"},
			[]string{"w_gate", "w_up", "w_down"}, map[string]string{
				"wq": "not a feed-forward weight", "wk": "not a feed-forward weight", "wv": "not a feed-forward weight",
				"wo": "not a feed-forward weight", "lm_head": "not a feed-forward weight"}},
		{"transformer all", buildTransformer, QuantizeOptions{Type: "q8_0", Policy: "all"},
			[]string{"wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "lm_head"}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := built(t, tc.build)
			reps, ch, err := Quantize(g, tc.opts)
			require.NoError(t, err)
			require.NoError(t, ir.VerifyTyped(g), "\n%s", ir.Text(g))
			names, skipped := quantized(reps)
			require.Equal(t, tc.want, names)
			require.Equal(t, tc.skipped, skipped)
			require.Equal(t, len(tc.want), ch.Removed)
			require.Equal(t, len(tc.want), ch.Added)
			n := 0
			for _, m := range g.Nodes {
				if m.Op == "QMatMul" {
					n++
				}
			}
			require.Equal(t, len(tc.want), n)
			for _, name := range tc.want {
				for _, c := range g.Consts {
					require.NotEqual(t, name, c.Name, "the float weight %s is dropped", name)
				}
			}
		})
	}
}

// decodedGraph returns g (freshly built) with every weight that reps
// quantized replaced by its decoded values, read from the quantized graph q.
func decodedGraph(t *testing.T, build func(*ir.Builder), q *ir.Graph, reps []QuantReport) *ir.Graph {
	t.Helper()
	g := built(t, build)
	byName := map[string]*ir.Value{}
	for _, c := range q.Consts {
		byName[c.Name] = c
	}
	for _, r := range reps {
		if r.Skipped != "" {
			continue
		}
		s, err := parseQuantType(r.Type)
		require.NoError(t, err)
		wq := byName[r.Weight+s.suffix()]
		require.NotNil(t, wq, "quantized constant of %s", r.Weight)
		var deq *ir.Tensor
		if r.Type == "int8-per-channel" {
			deq, err = quant.DequantizePerChannel(wq.Const, byName[r.Weight+"_scales"].Const)
		} else {
			deq, err = quant.Dequantize(wq.Const)
		}
		require.NoError(t, err)
		uses := g.Uses()
		for _, c := range g.Consts {
			if c.Name == r.Weight {
				wt := transposed2D(deq) // [N, K] → the [K, N] MatMul operand
				if rd := uses[c]; len(rd) > 0 && rd[0].Op == "Gemm" && rd[0].AttrInt("transB", 0) != 0 {
					wt = deq
				}
				if dt := c.Const.DType; dt != ir.Float32 {
					conv := ir.NewTensor(dt, wt.Shape)
					for i := 0; i < wt.Len(); i++ {
						conv.SetFloat64(i, wt.Float64(i))
					}
					wt = conv
				}
				c.Const = wt
			}
		}
	}
	return g
}

// outputRelError is Σ(y−ŷ)² / Σy² over all outputs.
func outputRelError(want, got []*ir.Tensor) float64 {
	var se, ss float64
	for i := range want {
		for j := 0; j < want[i].Len(); j++ {
			a, b := want[i].Float64(j), got[i].Float64(j)
			se += (a - b) * (a - b)
			ss += a * a
		}
	}
	return se / ss
}

// The quantized model computes exactly the model with decoded weights (up
// to f32 rounding), and stays close to the f32 model.
func TestQuantizeNumerics(t *testing.T) {
	for _, tc := range []struct {
		name   string
		build  func(b *ir.Builder)
		inputs func(g *ir.Graph, seed uint64) []*ir.Tensor
		typ    string
		bound  float64 // on the outputs' relative error against f32
	}{
		{"mlp q8_0", buildMLP, randomInputs, "q8_0", 1e-3},
		{"mlp q4_0", buildMLP, randomInputs, "q4_0", 5e-2},
		{"mlp int8", buildMLP, randomInputs, "int8-per-channel", 1e-3},
		{"transformer q8_0", buildTransformer, tokenInputs, "q8_0", 1e-3},
		{"transformer q4_0", buildTransformer, tokenInputs, "q4_0", 5e-2},
		{"transformer int8", buildTransformer, tokenInputs, "int8-per-channel", 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := built(t, tc.build)
			q := built(t, tc.build)
			reps, _, err := Quantize(q, QuantizeOptions{Type: tc.typ, Policy: "all"})
			require.NoError(t, err)
			dec := decodedGraph(t, tc.build, q, reps)
			for _, r := range reps {
				t.Logf("%-10s %-9s weight rel. error %.3e", r.Weight, fmt.Sprint(r.Shape), r.RelErr)
			}
			worst := 0.0
			for seed := uint64(1); seed <= 3; seed++ {
				in := tc.inputs(f, seed)
				yq := runRef(t, q, in)
				requireClose(t, runRef(t, dec, in), yq, 1e-5)
				e := outputRelError(runRef(t, f, in), yq)
				worst = max(worst, e)
				require.Less(t, e, tc.bound)
			}
			t.Logf("output relative error vs f32: %.3e", worst)
		})
	}
}

// tokenInputs draws token ids for the transformer.
func tokenInputs(_ *ir.Graph, seed uint64) []*ir.Tensor {
	rng := rand.New(rand.NewPCG(seed, 3))
	ids := make([]int64, 5)
	for i := range ids {
		ids[i] = rng.Int64N(50)
	}
	return []*ir.Tensor{ir.FromInt64([]int64{5}, ids)}
}

// Bytes saved: q4_0 stores 32 weights in 18 bytes (f32: 128), q8_0 in 34,
// int8 per channel one byte a weight plus a 4-byte scale per output row.
func TestQuantizeBytes(t *testing.T) {
	sizes := [][2]int64{{64, 128}, {128, 96}, {96, 10}}
	for _, tc := range []struct {
		typ   string
		after func(k, n int64) int64
	}{
		{"q4_0", func(k, n int64) int64 { return k * n / 32 * 18 }},
		{"q8_0", func(k, n int64) int64 { return k * n / 32 * 34 }},
		{"int8-per-channel", func(k, n int64) int64 { return k*n + 4*n }},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			g := built(t, buildMLP)
			reps, ch, err := Quantize(g, QuantizeOptions{Type: tc.typ, Policy: "all"})
			require.NoError(t, err)
			var saved int64
			for i, r := range reps {
				k, n := sizes[i][0], sizes[i][1]
				require.Equal(t, []int64{k, n}, r.Shape)
				require.Equal(t, 4*k*n, r.BytesBefore)
				require.Equal(t, tc.after(k, n), r.BytesAfter)
				saved += r.BytesBefore - r.BytesAfter
			}
			require.Equal(t, saved, ch.BytesSaved)
			if tc.typ == "int8-per-channel" {
				require.Equal(t, -3, ch.Consts, "each weight becomes codes and scales")
			} else {
				require.Equal(t, 0, ch.Consts, "each weight swapped for one constant")
			}
			if tc.typ == "q4_0" {
				require.Equal(t, 18.0/128, float64(reps[0].BytesAfter)/float64(reps[0].BytesBefore))
			}
		})
	}
}

func TestQuantizeEligibility(t *testing.T) {
	t.Run("K not a multiple of 32", func(t *testing.T) {
		build := func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 50))
			b.Output("y", b.Op("MatMul", x, gauss(b, "w", ir.Float32, 1, 1, 50, 8)))
		}
		reps, ch, err := Quantize(built(t, build), QuantizeOptions{Type: "q4_0", Policy: "all"})
		require.NoError(t, err)
		require.Equal(t, "K = 50 is not a multiple of 32", reps[0].Skipped)
		require.False(t, ch.Changed())
		// Per-channel int8 takes any K.
		g := built(t, build)
		reps, _, err = Quantize(g, QuantizeOptions{Type: "int8-per-channel", Policy: "all"})
		require.NoError(t, err)
		require.Empty(t, reps[0].Skipped)
		require.Equal(t, []string{"QMatMul"}, ops(g))
		require.Len(t, g.Nodes[0].Inputs, 3, "X, codes and scales")
	})
	for _, tc := range []struct {
		name  string
		build func(b *ir.Builder)
		skip  string
	}{
		{"integer weight", func(b *ir.Builder) {
			b.Output("y", b.Op("MatMul", b.Input("x", ir.Int32, sh(2, 32)), b.Const("w", ir.NewTensor(ir.Int32, []int64{32, 4}))))
		}, "weight is i32 (want f32, f16 or bf16)"},
		{"batched weight", func(b *ir.Builder) {
			b.Output("y", b.Op("MatMul", b.Input("x", ir.Float32, sh(3, 2, 32)), gauss(b, "w", ir.Float32, 1, 1, 3, 32, 4)))
		}, "weight has rank 3 (want 2)"},
		{"NaN in the weight", func(b *ir.Builder) {
			w := gauss(b, "w", ir.Float32, 1, 1, 32, 4)
			w.Const.SetFloat64(5, math.NaN())
			b.Output("y", b.Op("MatMul", b.Input("x", ir.Float32, sh(2, 32)), w))
		}, "weight holds NaN or Inf"},
		{"too large for f16 scales", func(b *ir.Builder) {
			w := gauss(b, "w", ir.Float32, 1, 1, 32, 4)
			w.Const.SetFloat64(5, 1e30)
			b.Output("y", b.Op("MatMul", b.Input("x", ir.Float32, sh(2, 32)), w))
		}, "values out of the range of the format's scales"},
		{"Gemm with transA", func(b *ir.Builder) {
			b.Output("y", b.OpA("Gemm", at(ir.Int("transA", 1)), b.Input("x", ir.Float32, sh(32, 2)), gauss(b, "w", ir.Float32, 1, 1, 32, 4)))
		}, "Gemm with transA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := built(t, tc.build)
			before := ops(g)
			reps, ch, err := Quantize(g, QuantizeOptions{Type: "q8_0", Policy: "all"})
			require.NoError(t, err)
			require.Len(t, reps, 1)
			require.Equal(t, tc.skip, reps[0].Skipped)
			require.False(t, ch.Changed())
			require.Equal(t, before, ops(g))
			require.Len(t, g.Consts, 1)
		})
	}
}

// quantCase is a graph quantized with q8_0 (policy all): the ops after, and
// a check of the rewritten graph.
type quantCase struct {
	name  string
	build func(b *ir.Builder)
	want  []string
	check func(t *testing.T, g *ir.Graph, ch Change)
}

// runQuantCases quantizes each case and checks that the result verifies,
// keeps its outputs' names and types, computes the model with decoded
// weights (to f32 rounding) and stays near the f32 model.
func runQuantCases(t *testing.T, cases []quantCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, q := built(t, c.build), built(t, c.build)
			reps, ch, err := Quantize(q, QuantizeOptions{Type: "q8_0", Policy: "all"})
			require.NoError(t, err)
			require.NoError(t, ir.VerifyTyped(q), "\n%s", ir.Text(q))
			require.Equal(t, c.want, ops(q), "\n%s", ir.Text(q))
			for i, o := range f.Outputs {
				require.Equal(t, o.Name, q.Outputs[i].Name, "output %d keeps its name", i)
				require.Equal(t, typeOf(o), typeOf(q.Outputs[i]), "output %d keeps its type", i)
			}
			if c.check != nil {
				c.check(t, q, ch)
			}
			dec := decodedGraph(t, c.build, q, reps)
			for seed := uint64(1); seed <= 3; seed++ {
				in := randomInputs(f, seed)
				yq := runRef(t, q, in)
				rel := 1e-5
				if yq[0].DType == ir.Float16 {
					rel = 2e-3 // QMatMul rounds to f16 before the rest
				}
				requireClose(t, runRef(t, dec, in), yq, rel)
				require.Less(t, outputRelError(runRef(t, f, in), yq), 1e-3)
			}
		})
	}
}

func TestQuantizeRewrites(t *testing.T) {
	runQuantCases(t, []quantCase{{
		name: "FusedMatMul keeps its bias and activation",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3, 64))
			b.Output("y", b.OpA("FusedMatMul", at(ir.Str("activation", "GeluTanh")), x,
				gauss(b, "w", ir.Float32, 1, 0.2, 64, 16), gauss(b, "bias", ir.Float32, 2, 1, 16)))
		},
		want: []string{"QMatMul", "Add", "Gelu"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.Equal(t, "tanh", g.Nodes[2].AttrString("approximate", ""))
		},
	}, {
		name: "FusedMatMul with Clip bounds",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(2, 5, 32))
			b.Output("y", b.OpA("FusedMatMul", at(ir.Str("activation", "Clip"), ir.Float("activation_alpha", -0.5), ir.Float("activation_beta", 0.5)),
				x, gauss(b, "w", ir.Float32, 3, 0.2, 32, 8)))
		},
		want: []string{"QMatMul", "Clip"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.Equal(t, -0.5, g.Nodes[1].In(1).Const.Float64(0))
			require.Equal(t, 0.5, g.Nodes[1].In(2).Const.Float64(0))
			require.Equal(t, -2, ch.Consts, "the weight swapped (0) and two bounds added")
		},
	}, {
		name: "FusedMatMul LeakyRelu keeps alpha",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(4, 32))
			b.Output("y", b.OpA("FusedMatMul", at(ir.Str("activation", "LeakyRelu"), ir.Float("activation_alpha", 0.2)),
				x, gauss(b, "w", ir.Float32, 4, 0.2, 32, 8)))
		},
		want: []string{"QMatMul", "LeakyRelu"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.InDelta(t, 0.2, g.Nodes[1].AttrFloat("alpha", 0), 1e-7)
		},
	}, {
		name: "Gemm with transB and C",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float32, sh(3, 32))
			b.Output("y", b.OpA("Gemm", at(ir.Int("transB", 1)), x, gauss(b, "w", ir.Float32, 5, 0.2, 7, 32), gauss(b, "c", ir.Float32, 6, 1, 7)))
		},
		want: []string{"QMatMul", "Add"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.Equal(t, []int64{7, 32}, g.Nodes[0].In(1).Const.Shape, "transB: the weight is already [N, K]")
		},
	}, {
		name: "f16 model, 1-D input",
		build: func(b *ir.Builder) {
			x := b.Input("x", ir.Float16, sh(32))
			b.Output("y", b.Op("MatMul", x, gauss(b, "w", ir.Float16, 7, 0.2, 32, 6)))
		},
		want: []string{"QMatMul"},
	}, {
		name: "a shared weight is quantized once",
		build: func(b *ir.Builder) {
			w := gauss(b, "w", ir.Float32, 8, 0.2, 32, 8)
			y1 := b.Op("MatMul", b.Input("x1", ir.Float32, sh(2, 32)), w)
			y2 := b.Op("MatMul", b.Input("x2", ir.Float32, sh(3, 32)), w)
			b.Output("y1", y1)
			b.Output("y2", y2)
		},
		want: []string{"QMatMul", "QMatMul"},
		check: func(t *testing.T, g *ir.Graph, ch Change) {
			require.Same(t, g.Nodes[0].In(1), g.Nodes[1].In(1))
			require.Len(t, g.Consts, 1)
			require.Equal(t, Change{Removed: 2, Added: 2, BytesSaved: 32*8*4 - 8*34}, ch)
		},
	}})
}

// A constant that a Gather reads is an embedding: the default policy keeps
// it; "all" quantizes its MatMul use but keeps the float copy for the Gather.
func TestQuantizeTiedEmbedding(t *testing.T) {
	build := func(b *ir.Builder) {
		e := gauss(b, "tied", ir.Float32, 1, 1, 64, 64)
		h := b.Op("Gather", e, b.Input("ids", ir.Int64, sh(3)))
		h = b.Op("Relu", b.Op("MatMul", h, gauss(b, "w1", ir.Float32, 2, 0.1, 64, 64)))
		h = b.Op("MatMul", h, e)
		b.Output("y", b.Op("MatMul", h, gauss(b, "head", ir.Float32, 3, 0.1, 64, 8)))
	}
	reps, _, err := Quantize(built(t, build), QuantizeOptions{Type: "q8_0"})
	require.NoError(t, err)
	names, skipped := quantized(reps)
	require.Equal(t, []string{"w1"}, names)
	require.Equal(t, map[string]string{"tied": "embedding (read by Gather)", "head": "head (last weight before a model output)"}, skipped)

	g := built(t, build)
	reps, ch, err := Quantize(g, QuantizeOptions{Type: "q8_0", Policy: "all"})
	require.NoError(t, err)
	require.Equal(t, -1, ch.Consts, "tied stays for the Gather; its q8_0 copy is added")
	require.Len(t, g.Consts, 4)
	require.Equal(t, []string{"w1", "tied", "head"}, []string{reps[0].Weight, reps[1].Weight, reps[2].Weight}, "model order")
	require.True(t, reps[1].KeptFloat)
	require.False(t, reps[0].KeptFloat)
	q8 := func(k, n int) int { return k * n / 32 * 34 }
	require.Equal(t, (64*64*4-q8(64, 64))+(64*8*4-q8(64, 8))-q8(64, 64), int(ch.BytesSaved), "w1 and head saved, tied's copy added")
	var sb strings.Builder
	writeQuantized(&sb, reps)
	require.Contains(t, sb.String(), "(float copy kept for other readers)")
	require.Contains(t, sb.String(), "quantized 34816 -> 25632 bytes (73.6%)")
}

func TestQuantizeErrorsAndNoOp(t *testing.T) {
	g := built(t, buildMLP)
	_, _, err := Quantize(g, QuantizeOptions{Type: "q3_x"})
	require.ErrorContains(t, err, `unknown quantization type "q3_x" (want one of q8_0, q4_0`)
	_, _, err = Quantize(g, QuantizeOptions{Type: "q4_0", Policy: "most"})
	require.ErrorContains(t, err, `unknown quantization policy "most"`)
	_, _, err = Quantize(g, QuantizeOptions{Type: "q4_0", Layers: []string{"fc1.weight", "fc9.weight"}})
	require.ErrorContains(t, err, `names no weight of a MatMul, FusedMatMul or Gemm: "fc9.weight"`)
	_, _, err = Quantize(g, QuantizeOptions{})
	require.ErrorContains(t, err, "no quantization type")
	require.Equal(t, []string{"MatMul", "Add", "Relu", "MatMul", "Add", "Relu", "MatMul"}, ops(g), "errors leave the graph alone")

	// Without a type the pass is a no-op, whatever else is set.
	ch := runPass(t, g, quantizePass)
	require.Equal(t, Change{}, ch)
	ctx := NewContext(g)
	ctx.Opts.Quantize = QuantizeOptions{Policy: "all", Layers: []string{"x"}}
	ch, err = quantizePass(g, ctx)
	require.NoError(t, err)
	require.Equal(t, Change{}, ch)
}

// Through Run: the report lists every weight with its error, the pipeline
// (with fusion) still verifies, and -O0 (no lowering) handles Gemm itself.
func TestQuantizeInPipeline(t *testing.T) {
	for level := 0; level <= MaxLevel; level++ {
		g := built(t, buildMLP)
		f := built(t, buildMLP)
		rep, err := Run(g, Options{Level: level, Verify: true, Eval: refEval, Quantize: QuantizeOptions{Type: "q4_0"}})
		require.NoError(t, err)
		require.Len(t, rep.Quantized, 3)
		names, skipped := quantized(rep.Quantized)
		require.Equal(t, []string{"fc1.weight", "fc2.weight"}, names, "-O%d", level)
		require.Contains(t, skipped, "fc3.weight")
		for _, r := range rep.Quantized[:2] {
			require.Greater(t, r.RelErr, 1e-3)
			require.Less(t, r.RelErr, 2e-2)
		}
		text := rep.String()
		require.Contains(t, text, "quantized weights:")
		require.Contains(t, text, "fc1.weight  64x128  q4_0")
		require.Contains(t, text, "skipped: head")
		require.True(t, strings.Contains(text, "quantized 81920 -> 11520 bytes (14.1%)"), text)
		in := randomInputs(f, 1)
		require.Less(t, outputRelError(runRef(t, f, in), runRef(t, g, in)), 5e-2)

		// Without a type, nothing changes and nothing is reported.
		plain := built(t, buildMLP)
		rep, err = Run(plain, Options{Level: level, Verify: true, Eval: refEval})
		require.NoError(t, err)
		require.Empty(t, rep.Quantized)
		require.NotContains(t, rep.String(), "quantized")
	}
}
