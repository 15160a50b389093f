package zoo_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/frontend/onnx"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/zoo"
)

// tiny configurations: every code path of the builders at a size the
// reference kernels run in well under a second.
func tinyResNet(bottleneck, symbolic bool, batch int) zoo.ResNetConfig {
	c := zoo.ResNetConfig{Blocks: []int{1, 2, 1, 1}, Bottleneck: bottleneck, Width: 8, Batch: batch,
		ImageSize: 32, Classes: 10, Seed: 7, SymbolicBatch: symbolic}
	return c
}

func tinyBERT(symbolic bool) zoo.TransformerConfig {
	return zoo.TransformerConfig{Layers: 2, Hidden: 32, Heads: 4, FFN: 64, Seq: 8, Vocab: 50, Batch: 2,
		MaxPositions: 16, TypeVocab: 2, Eps: 1e-12, AttentionMask: true, Pooler: true, Symbolic: symbolic, Seed: 3}
}

func tinyGPT(symbolic bool) zoo.TransformerConfig {
	return zoo.TransformerConfig{Layers: 2, Hidden: 32, Heads: 4, FFN: 128, Seq: 8, Vocab: 60, Batch: 2,
		MaxPositions: 16, Eps: 1e-5, Symbolic: symbolic, Seed: 5}
}

type tinyCase struct {
	name   string
	build  func() (*ir.Graph, error)
	inputs func() map[string]*ir.Tensor
	outs   map[string][]int64 // output shapes
}

func image(batch int, seed int) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, []int64{int64(batch), 3, 32, 32})
	f := t.Float32s()
	for i := range f {
		f[i] = float32(math.Sin(float64(i*(seed+3)) * 0.01))
	}
	return t
}

func tokens(batch, seq, vocab int, seed int) *ir.Tensor {
	vals := make([]int64, batch*seq)
	for i := range vals {
		vals[i] = int64((i*7 + seed*13 + 1) % vocab)
	}
	return ir.FromInt64([]int64{int64(batch), int64(seq)}, vals)
}

// attentionMask keeps the first keep[b] tokens of row b.
func attentionMask(seq int, keep ...int) *ir.Tensor {
	vals := make([]float32, len(keep)*seq)
	for b, k := range keep {
		for s := 0; s < k; s++ {
			vals[b*seq+s] = 1
		}
	}
	return ir.FromFloat32([]int64{int64(len(keep)), int64(seq)}, vals)
}

func tinyCases() []tinyCase {
	var cases []tinyCase
	for _, sym := range []bool{false, true} {
		for _, bott := range []bool{true, false} {
			c := tinyResNet(bott, sym, 2)
			cases = append(cases, tinyCase{
				name:   fmt.Sprintf("resnet/bottleneck=%v/symbolic=%v", bott, sym),
				build:  func() (*ir.Graph, error) { return zoo.ResNet(c) },
				inputs: func() map[string]*ir.Tensor { return map[string]*ir.Tensor{"input": image(2, 1)} },
				outs:   map[string][]int64{"output": {2, 10}},
			})
		}
		bc, gc := tinyBERT(sym), tinyGPT(sym)
		cases = append(cases, tinyCase{
			name:  fmt.Sprintf("bert/symbolic=%v", sym),
			build: func() (*ir.Graph, error) { return zoo.BERT(bc) },
			inputs: func() map[string]*ir.Tensor {
				return map[string]*ir.Tensor{"input_ids": tokens(2, 8, 50, 1), "attention_mask": attentionMask(8, 8, 5)}
			},
			outs: map[string][]int64{"last_hidden_state": {2, 8, 32}, "pooler_output": {2, 32}},
		}, tinyCase{
			name:   fmt.Sprintf("gpt/symbolic=%v", sym),
			build:  func() (*ir.Graph, error) { return zoo.GPT(gc) },
			inputs: func() map[string]*ir.Tensor { return map[string]*ir.Tensor{"input_ids": tokens(2, 8, 60, 2)} },
			outs:   map[string][]int64{"logits": {2, 8, 60}},
		})
	}
	return cases
}

func run(t *testing.T, g *ir.Graph, level int, in map[string]*ir.Tensor) map[string]*ir.Tensor {
	t.Helper()
	m, err := weft.New(g, weft.Options{OptLevel: level, Verify: true})
	require.NoError(t, err)
	defer m.Close()
	out, err := m.Run(context.Background(), in)
	require.NoError(t, err)
	return out
}

// TestTinyModels: each builder's graph verifies, is fully typed by shape
// inference (static shapes everywhere unless symbolic), runs at -O0 with
// finite outputs of the expected shapes, and gives the same outputs at -O2
// (within 1e-4) and after a round trip through an ONNX file.
func TestTinyModels(t *testing.T) {
	for _, tc := range tinyCases() {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tc.build()
			require.NoError(t, err)
			require.NoError(t, passes.InferShapes(g))
			require.NoError(t, ir.VerifyTyped(g))
			symbolic := strings.Contains(tc.name, "symbolic=true")
			g.Walk(func(sg *ir.Graph) {
				for _, n := range sg.Nodes {
					for _, o := range n.Outputs {
						require.True(t, o.DType.Valid() && o.Shape != nil, "%v: %v", n, o)
						if !symbolic {
							require.True(t, o.Shape.Static(), "%v: %v", n, o)
						}
					}
				}
			})
			data, err := onnx.Marshal(g, 17)
			require.NoError(t, err)

			in := tc.inputs()
			out0 := run(t, g, 0, in)
			for name, shape := range tc.outs {
				o := out0[name]
				require.NotNil(t, o, name)
				require.Equal(t, shape, o.Shape, name)
				for i := 0; i < o.Len(); i++ {
					v := o.Float64(i)
					require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%s[%d] = %v", name, i, v)
					require.Less(t, math.Abs(v), 1e4, "%s[%d]", name, i)
				}
			}

			g2, err := tc.build()
			require.NoError(t, err)
			n0 := len(g2.Nodes)
			out2 := run(t, g2, 2, in)
			t.Logf("%d nodes at -O0, %d at -O2: %s", n0, len(g2.Nodes), opCounts(g2))
			for name := range tc.outs {
				requireClose(t, out0[name], out2[name], 1e-4, name+" at -O2")
			}

			m, err := onnx.Parse(data, "")
			require.NoError(t, err)
			outW := run(t, m.Graph, 0, in)
			for name := range tc.outs {
				require.Equal(t, out0[name].Data, outW[name].Data, "%s after an ONNX round trip", name)
			}
		})
	}
}

// opCounts summarises a graph's ops, most frequent first.
func opCounts(g *ir.Graph) string {
	h := map[string]int{}
	var ops []string
	for _, n := range g.Nodes {
		if h[n.Op] == 0 {
			ops = append(ops, n.Op)
		}
		h[n.Op]++
	}
	sort.SliceStable(ops, func(i, j int) bool { return h[ops[i]] > h[ops[j]] })
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%s×%d", op, h[op])
	}
	return strings.Join(parts, " ")
}

// requireClose checks |a-b| <= tol·max(1, |a|) elementwise.
func requireClose(t *testing.T, a, b *ir.Tensor, tol float64, what string) {
	t.Helper()
	require.NotNil(t, b, what)
	require.Equal(t, a.Shape, b.Shape, what)
	for i := 0; i < a.Len(); i++ {
		x, y := a.Float64(i), b.Float64(i)
		require.LessOrEqual(t, math.Abs(x-y), tol*math.Max(1, math.Abs(x)), "%s[%d]: %v vs %v", what, i, x, y)
	}
}

// TestBERTMaskAndLayerNorm checks two properties derived by hand: tokens
// with attention mask 0 cannot change the other tokens' outputs (their
// softmax weight is exp(-10000) = 0 in float32), and the last LayerNorm
// makes ((y - β) / γ) zero-mean with unit variance per token.
func TestBERTMaskAndLayerNorm(t *testing.T) {
	c := tinyBERT(false)
	g, err := zoo.BERT(c)
	require.NoError(t, err)
	mask := attentionMask(8, 8, 5)
	ids := tokens(2, 8, 50, 1)
	out := run(t, g, 0, map[string]*ir.Tensor{"input_ids": ids, "attention_mask": mask})
	ids2 := ids.Clone()
	for s := 5; s < 8; s++ {
		ids2.SetInt64(8+s, (ids.Int64(8+s)+17)%50) // change row 1's padded tokens
	}
	g2, err := zoo.BERT(c)
	require.NoError(t, err)
	out2 := run(t, g2, 0, map[string]*ir.Tensor{"input_ids": ids2, "attention_mask": mask})
	h, h2 := out["last_hidden_state"], out2["last_hidden_state"]
	row := 8 * 32
	require.Equal(t, h.Data[:4*(row+5*32)], h2.Data[:4*(row+5*32)], "unpadded tokens unchanged")
	require.NotEqual(t, h.Data[4*(row+5*32):], h2.Data[4*(row+5*32):], "padded tokens did change")

	var gamma, beta *ir.Tensor
	for _, cv := range g.Consts {
		switch cv.Name {
		case "bert.encoder.layer.1.output.LayerNorm.weight":
			gamma = cv.Const
		case "bert.encoder.layer.1.output.LayerNorm.bias":
			beta = cv.Const
		}
	}
	require.NotNil(t, gamma)
	require.NotNil(t, beta)
	for tok := 0; tok < 16; tok++ {
		var sum, sq float64
		for j := 0; j < 32; j++ {
			z := (h.Float64(tok*32+j) - beta.Float64(j)) / gamma.Float64(j)
			sum += z
			sq += z * z
		}
		require.InDelta(t, 0, sum/32, 1e-4, "token %d mean", tok)
		require.InDelta(t, 1, sq/32, 1e-3, "token %d variance", tok)
	}
}

// TestGPTCausal: changing the last token changes only the last position's
// logits.
func TestGPTCausal(t *testing.T) {
	for _, sym := range []bool{false, true} {
		c := tinyGPT(sym)
		ids := tokens(2, 8, 60, 2)
		ids2 := ids.Clone()
		ids2.SetInt64(7, (ids.Int64(7)+1)%60)
		ids2.SetInt64(15, (ids.Int64(15)+1)%60)
		var outs []*ir.Tensor
		for _, in := range []*ir.Tensor{ids, ids2} {
			g, err := zoo.GPT(c)
			require.NoError(t, err)
			outs = append(outs, run(t, g, 0, map[string]*ir.Tensor{"input_ids": in})["logits"])
		}
		for b := 0; b < 2; b++ {
			lo, hi := 4*(b*8*60), 4*(b*8*60+7*60)
			require.Equal(t, outs[0].Data[lo:hi], outs[1].Data[lo:hi], "row %d positions 0..6", b)
			require.NotEqual(t, outs[0].Data[hi:hi+4*60], outs[1].Data[hi:hi+4*60], "row %d position 7", b)
		}
	}
}

// trainable counts the weights the builders name like PyTorch parameters.
func trainable(g *ir.Graph) int64 {
	var n int64
	for _, c := range g.Consts {
		if strings.HasSuffix(c.Name, ".weight") || strings.HasSuffix(c.Name, ".bias") {
			n += int64(c.Const.Len())
		}
	}
	return n
}

func TestParams(t *testing.T) {
	// The well-known figures (torchvision, Hugging Face).
	require.EqualValues(t, 25_557_032, zoo.ResNet50Config(1, 0).Params())
	require.EqualValues(t, 11_689_512, zoo.ResNet18Config(1, 0).Params())
	base := zoo.BERTBase()
	require.EqualValues(t, 108_891_648, base.BERTParams(), "bert-base without pooler")
	base.Pooler = true
	require.EqualValues(t, 109_482_240, base.BERTParams(), "bert-base-uncased")

	// The analytic counts agree with what the builders create.
	for _, c := range []zoo.ResNetConfig{tinyResNet(true, false, 1), tinyResNet(false, true, 1)} {
		g, err := zoo.ResNet(c)
		require.NoError(t, err)
		require.Equal(t, c.Params(), trainable(g))
	}
	for _, pooler := range []bool{false, true} {
		c := tinyBERT(false)
		c.Pooler = pooler
		g, err := zoo.BERT(c)
		require.NoError(t, err)
		require.Equal(t, c.BERTParams(), trainable(g))
	}
	gc := tinyGPT(true)
	g, err := zoo.GPT(gc)
	require.NoError(t, err)
	require.Equal(t, gc.GPTParams(), trainable(g))
}

// TestFullSize builds the full-size models once, checks their parameter
// counts and that shape inference types every value, and compiles them at -O2.
func TestFullSize(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 1 GB of weights")
	}
	for _, name := range zoo.Names() {
		g, err := zoo.Build(name, zoo.Options{Seed: 1})
		require.NoError(t, err, name)
		require.NoError(t, passes.InferShapes(g), name)
		require.NoError(t, ir.VerifyTyped(g), name)
		n := trainable(g)
		switch name {
		case "resnet50":
			require.EqualValues(t, 25_557_032, n)
		case "resnet18":
			require.EqualValues(t, 11_689_512, n)
		case "bert-base":
			require.EqualValues(t, 108_891_648, n)
		case "bert-4l":
			c := zoo.BERT4L()
			require.Equal(t, c.BERTParams(), n)
		case "gpt-6l":
			c := zoo.GPT6L()
			require.Equal(t, c.GPTParams(), n)
		}
		// The exporter-style graph gives -O2 real work (Conv+BN folding,
		// LayerNorm/GELU/attention recognition, fusion).
		n0 := len(g.Nodes)
		_, _, err = weft.Compile(g, weft.Options{OptLevel: 2})
		require.NoError(t, err, name)
		require.Less(t, len(g.Nodes), n0, "%s: -O2 removes nodes", name)
		t.Logf("%-9s %d parameters, %d nodes at -O0, %d at -O2", name, n, n0, len(g.Nodes))
	}
}

func TestDeterministic(t *testing.T) {
	enc := func(seed int64) []byte {
		c := tinyBERT(false)
		c.Seed = seed
		g, err := zoo.BERT(c)
		require.NoError(t, err)
		data, err := onnx.Marshal(g, 17)
		require.NoError(t, err)
		return data
	}
	a, b, c := enc(1), enc(1), enc(2)
	require.True(t, bytes.Equal(a, b), "same seed, same model")
	require.False(t, bytes.Equal(a, c), "another seed, other weights")
	require.Equal(t, len(a), len(c))
}

func TestConfigErrors(t *testing.T) {
	bad := tinyResNet(true, false, 0)
	_, err := zoo.ResNet(bad)
	require.ErrorContains(t, err, "batch 0")
	r := tinyResNet(true, false, 1)
	r.ImageSize = 8
	_, err = zoo.ResNet(r)
	require.ErrorContains(t, err, "too small")
	b := tinyBERT(false)
	b.Heads = 5
	_, err = zoo.BERT(b)
	require.ErrorContains(t, err, "not a multiple of heads")
	b = tinyBERT(false)
	b.Seq = 100
	_, err = zoo.BERT(b)
	require.ErrorContains(t, err, "max positions 16 < seq 100")
	g := tinyGPT(false)
	g.Eps = 0
	_, err = zoo.GPT(g)
	require.ErrorContains(t, err, "epsilon")
	_, err = zoo.Build("alexnet", zoo.Options{})
	require.ErrorContains(t, err, `unknown model "alexnet" (have: bert-4l, bert-base, gpt-6l, resnet18, resnet50)`)
	_, err = zoo.Build("bert-4l", zoo.Options{Seq: -1})
	require.ErrorContains(t, err, "must not be negative")
	require.Panics(t, func() { zoo.ResNet50(0, 1) })
}
