package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// TestQMatMulGroup checks the group kernel against QMatMul's fast kernel
// run on each weight alone (bit for bit: a group only shares the
// quantized activations and the dispatch) and, for silu_mul, against the
// reference SiLU and Mul of those outputs (to 1e-6: kernels.SiLU); and the whole op against its
// reference kernel on the activations rounded to q8 blocks (q8Round).
func TestQMatMulGroup(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, c := range []struct {
			dt  ir.DType
			ns  []int
			xs  []int64
			act string
		}{
			{ir.Q4_0, []int{96, 32, 32}, []int64{1, 1, 64}, ""},
			{ir.Q8_0, []int{70, 33, 5}, []int64{1, 5, 96}, ""},
			{ir.Q4_0, []int{130, 130}, []int64{1, 1, 128}, "silu_mul"},
			{ir.Q8_0, []int{41, 41}, []int64{2, 6, 64}, "silu_mul"},
			{ir.Q4_K, []int{20, 7}, []int64{3, 256}, ""},
			{ir.Q6_K, []int{9, 9}, []int64{1, 256}, "silu_mul"},
			{ir.Float16, []int{70, 33, 5}, []int64{1, 1, 64}, ""},
			{ir.BFloat16, []int{130, 130}, []int64{1, 96}, "silu_mul"},
			{ir.Float16, []int{301, 301}, []int64{1, 1, 256}, "silu_mul"},
			// "bias": attribute bias 1 and one bias per weight (Qwen2's q/k/v).
			{ir.Q4_0, []int{96, 32, 32}, []int64{1, 1, 64}, "bias"},
			{ir.Q8_0, []int{70, 33, 5}, []int64{1, 5, 96}, "bias"},
			{ir.Float16, []int{70, 33}, []int64{1, 3, 64}, "bias"},
		} {
			t.Run(fmt.Sprint(c.dt, c.ns, c.xs, c.act), func(t *testing.T) {
				K := int(c.xs[len(c.xs)-1])
				x := randF32(r, c.xs...)
				in := []*ir.Tensor{x}
				for _, n := range c.ns {
					var w *ir.Tensor
					switch {
					case c.dt == ir.Q4_K || c.dt == ir.Q6_K:
						w, _ = kQuantWeight(t, r, c.dt, n, K)
					case c.dt == ir.Float16 || c.dt == ir.BFloat16:
						w = toHalf(randF32(r, int64(n), int64(K)), c.dt)
					default:
						var err error
						w, err = quant.Quantize(randF32(r, int64(n), int64(K)), c.dt)
						require.NoError(t, err)
					}
					in = append(in, w)
				}
				var attrs []ir.AttrOption
				nOut := len(c.ns)
				nw := len(c.ns)
				switch c.act {
				case "":
				case "bias":
					attrs = []ir.AttrOption{ir.Int("bias", 1)}
					for _, n := range c.ns {
						in = append(in, randF32(r, int64(n)))
					}
				default:
					attrs, nOut = []ir.AttrOption{ir.Str("act", c.act)}, 1
				}
				n := nodeN("QMatMulGroup", attrs, in, nOut)
				// The oracle: the reference kernel on the activations rounded
				// as the kernel quantizes them.
				xr := q8Round(x)
				if c.dt == ir.Float16 || c.dt == ir.BFloat16 {
					xr = x // nothing is quantized
				}
				want := refRun(t, n, append([]*ir.Tensor{xr}, in[1:]...))
				consts := make([]bool, len(in))
				for i := 1; i < len(in); i++ {
					consts[i] = true
				}
				got := make([]*ir.Tensor, nOut)
				for i := range got {
					got[i] = ir.NewTensor(ir.Float32, want[i].Shape)
				}
				k, err := buildIntoForTest(n, in, got, consts)
				require.NoError(t, err)
				require.NotNil(t, k, "the group kernel declined")
				for range 2 { // a second run reuses the pooled job
					require.NoError(t, k(in, got))
				}
				// Each weight alone through QMatMul's fast kernel.
				single := make([]*ir.Tensor, len(c.ns))
				for i := range c.ns {
					sn := node("QMatMul", nil, []*ir.Tensor{x, in[1+i]})
					single[i] = ir.NewTensor(ir.Float32, refRun(t, sn, []*ir.Tensor{x, in[1+i]})[0].Shape)
					sk, err := buildIntoForTest(sn, []*ir.Tensor{x, in[1+i]}, single[i:i+1], []bool{false, true})
					require.NoError(t, err)
					require.NotNil(t, sk)
					require.NoError(t, sk([]*ir.Tensor{x, in[1+i]}, single[i:i+1]))
				}
				if c.act == "" {
					for i := range got {
						require.Equal(t, single[i].Float32s(), got[i].Float32s(), "output %d", i)
						requireClose(t, want[i], got[i], 1e-4)
					}
					return
				}
				if c.act == "bias" {
					// Bit for bit the reference Add of the bias to QMatMul's output.
					for i := range got {
						b := in[1+nw+i]
						sum := refRun(t, node("Add", nil, []*ir.Tensor{single[i], b}), []*ir.Tensor{single[i], b})[0]
						require.Equal(t, sum.Float32s(), got[i].Float32s(), "output %d", i)
						requireClose(t, want[i], got[i], 1e-4)
					}
					return
				}
				silu := refRun(t, node("SiLU", nil, single[:1]), single[:1])
				prod := refRun(t, node("Mul", nil, []*ir.Tensor{silu[0], single[1]}), []*ir.Tensor{silu[0], single[1]})
				// SiLU is kernels.SiLU (vectorized exp): within 3e-7 relative.
				requireClose(t, prod[0], got[0], 1e-6)
				requireClose(t, want[0], got[0], 1e-4)
			})
		}
	})
}

// TestQMatMulGroupRefMatchesOps checks the reference kernel of
// QMatMulGroup against the reference QMatMul, SiLU and Mul kernels, bit for
// bit (the op's meaning, ir/ops.go).
func TestQMatMulGroupRefMatchesOps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	x := randF32(r, 3, 64)
	w0, err := quant.Quantize(randF32(r, 17, 64), ir.Q4_0)
	require.NoError(t, err)
	w1, err := quant.Quantize(randF32(r, 17, 64), ir.Q4_0)
	require.NoError(t, err)
	y0 := refRun(t, node("QMatMul", nil, []*ir.Tensor{x, w0}), []*ir.Tensor{x, w0})[0]
	y1 := refRun(t, node("QMatMul", nil, []*ir.Tensor{x, w1}), []*ir.Tensor{x, w1})[0]
	plain := refRun(t, nodeN("QMatMulGroup", nil, []*ir.Tensor{x, w0, w1}, 2), []*ir.Tensor{x, w0, w1})
	require.Equal(t, y0.Float32s(), plain[0].Float32s())
	require.Equal(t, y1.Float32s(), plain[1].Float32s())
	silu := refRun(t, node("SiLU", nil, []*ir.Tensor{y0}), []*ir.Tensor{y0})[0]
	want := refRun(t, node("Mul", nil, []*ir.Tensor{silu, y1}), []*ir.Tensor{silu, y1})[0]
	got := refRun(t, nodeN("QMatMulGroup", []ir.AttrOption{ir.Str("act", "silu_mul")}, []*ir.Tensor{x, w0, w1}, 1), []*ir.Tensor{x, w0, w1})[0]
	require.Equal(t, want.Float32s(), got.Float32s())
	// bias 1: Add(QMatMul(X, Wi), Bi).
	b0, b1 := randF32(r, 17), randF32(r, 17)
	in := []*ir.Tensor{x, w0, w1, b0, b1}
	biased := refRun(t, nodeN("QMatMulGroup", []ir.AttrOption{ir.Int("bias", 1)}, in, 2), in)
	for i, yb := range [][2]*ir.Tensor{{y0, b0}, {y1, b1}} {
		sum := refRun(t, node("Add", nil, yb[:]), yb[:])[0]
		require.Equal(t, sum.Float32s(), biased[i].Float32s(), "output %d", i)
	}
	// A bias of the wrong length, and biases with silu_mul, are errors.
	bad := []*ir.Tensor{x, w0, w1, b0, randF32(r, 16)}
	_, err = refRunErr(nodeN("QMatMulGroup", []ir.AttrOption{ir.Int("bias", 1)}, bad, 2), bad)
	require.ErrorContains(t, err, "bias 1")
	_, err = refRunErr(nodeN("QMatMulGroup", []ir.AttrOption{ir.Int("bias", 1), ir.Str("act", "silu_mul")}, in, 1), in)
	require.ErrorContains(t, err, "unsupported")
}
