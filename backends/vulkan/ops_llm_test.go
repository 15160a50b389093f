//go:build cgo

package vulkan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
	"github.com/weftrt/weft/passes"
)

// qmatmulGraph builds QMatMul(x, W) with x an f32 input of shape xs and W a
// random [n, k] f32 matrix quantized to dt (nil scales unless given).
func qmatmulGraph(t testing.TB, seed uint64, xs []int64, n, k int64, dt ir.DType, scales bool) (*ir.Graph, map[*ir.Value]*ir.Tensor) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 11))
	b := ir.NewBuilder("qmatmul")
	xt := randTensor(r, in(xs...))
	x := b.Input("x", ir.Float32, ir.S(xs...))
	wf := randTensor(r, in(n, k))
	var wt, st *ir.Tensor
	var err error
	if dt == ir.Int8 {
		wt, st, err = quant.QuantizePerChannel(wf)
	} else {
		wt, err = quant.Quantize(wf, dt)
	}
	require.NoError(t, err)
	vals := map[*ir.Value]*ir.Tensor{x: xt}
	w := b.Const("w", wt)
	vals[w] = wt
	ins := []*ir.Value{x, w}
	if scales {
		s := b.Const("s", st)
		vals[s] = st
		ins = append(ins, s)
	}
	b.Output("y", b.Op("QMatMul", ins...))
	g, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, passes.InferShapes(g))
	return g, vals
}

// TestQMatMul runs QMatMul with Q8_0 and Q4_0 weights against the reference
// kernel, on shapes whose weight bytes end mid-word (an odd block count).
func TestQMatMul(t *testing.T) {
	d := testDevice(t)
	cases := []struct {
		xs   []int64
		n, k int64
	}{
		{[]int64{32}, 1, 32},       // 1-D X, one block
		{[]int64{1, 32}, 7, 32},    // 7 blocks: the last ends mid-word
		{[]int64{3, 5, 96}, 5, 96}, // batched X, 15 blocks
		{[]int64{2, 64}, 9, 64},
		{[]int64{13, 160}, 3, 160},
	}
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0} {
		for i, c := range cases {
			name := fmt.Sprintf("%v/x%v/w%dx%d", dt, c.xs, c.n, c.k)
			t.Run(name, func(t *testing.T) {
				g, vals := qmatmulGraph(t, uint64(i+1), c.xs, c.n, c.k, dt, false)
				require.NoError(t, d.Supports(g.Nodes[0]))
				want := reference(t, g, vals)
				got := onDevice(t, d, g, vals)
				requireClose(t, want[g.Outputs[0]], got[g.Outputs[0]], 1e-4, name)
			})
		}
	}
}

// TestQMatMulDeclines: weights the shader does not decode stay elsewhere.
func TestQMatMulDeclines(t *testing.T) {
	d := testDevice(t)
	g, _ := qmatmulGraph(t, 1, []int64{2, 32}, 3, 32, ir.Q4_1, false)
	require.ErrorIs(t, d.Supports(g.Nodes[0]), ir.ErrUnsupported)
	require.ErrorContains(t, d.Supports(g.Nodes[0]), "q4_1")
	g, _ = qmatmulGraph(t, 1, []int64{2, 32}, 3, 32, ir.Int8, true)
	require.ErrorIs(t, d.Supports(g.Nodes[0]), ir.ErrUnsupported)
}

// positions is an i64 [b, s] operand of the given values.
func positions(isConst bool, b, s int64, v ...int64) operand {
	return operand{shape: []int64{b, s}, isConst: isConst, ints: v}
}

func TestRotaryEmbedding(t *testing.T) {
	rot := func(inter, r int64) []ir.AttrOption {
		return []ir.AttrOption{ir.Int("interleaved", inter), ir.Int("rotary_embedding_dim", r)}
	}
	var cases []opCase
	for _, inter := range []int64{0, 1} {
		cases = append(cases,
			opCase{op: "RotaryEmbedding", attrs: rot(inter, 0),
				ins: []operand{in(1, 1, 1, 2), in(1, 1), in(1, 1), positions(false, 1, 1, 0)}},
			opCase{op: "RotaryEmbedding", attrs: rot(inter, 0),
				ins: []operand{in(2, 3, 5, 6), in(9, 3), in(9, 3), positions(false, 2, 5, 0, 8, 3, 3, 1, 7, 2, 0, 6, 5)}},
			opCase{op: "RotaryEmbedding", attrs: rot(inter, 4), // partial rotation: elements ≥ 4 copied
				ins: []operand{in(1, 3, 3, 10), konst(4, 2), konst(4, 2), positions(true, 1, 3, 3, 0, 2)}},
			opCase{op: "RotaryEmbedding", attrs: rot(inter, 6),
				ins: []operand{in(3, 2, 1, 6), in(5, 3), in(5, 3), positions(false, 3, 1, 4, 0, 2)}},
		)
	}
	runCases(t, cases)
}

// TestRotaryPositionRange: a position outside [0, max_pos) is an error, at
// compile time for constant ids and before the dispatch for the others.
func TestRotaryPositionRange(t *testing.T) {
	d := testDevice(t)
	g, vals := oneNode(t, 1, "RotaryEmbedding", nil, in(1, 2, 3, 4), in(5, 2), in(5, 2), positions(false, 1, 3, 0, 4, 1))
	exe, err := d.Compile(wholePartition(g))
	require.NoError(t, err)
	defer exe.(*executable).Close()
	runExe(t, exe, g, vals)
	for _, bad := range []int64{5, -1} {
		env := backends.NewEnv(nil)
		for _, v := range g.Inputs {
			env.Set(v, vals[v])
		}
		env.Set(g.Inputs[3], ir.FromInt64([]int64{1, 3}, []int64{0, bad, 1}))
		err := exe.Run(context.Background(), env)
		require.ErrorContains(t, err, fmt.Sprintf("position %d at index 1 is outside the caches' 5 positions", bad))
	}
	g, _ = oneNode(t, 1, "RotaryEmbedding", nil, in(1, 2, 3, 4), in(5, 2), in(5, 2), positions(true, 1, 3, 0, 9, 1))
	require.ErrorContains(t, d.Supports(g.Nodes[0]), "position 9 at index 1")
}
