package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	goruntime "runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// TestQMatMulGroupRowExact checks that the group kernel gives every
// activation row of a batch bit for bit what it gives that row alone (a
// decode step), for every weight type, with and without the SwiGLU, at
// row counts below and above 32 (where the f16/bf16 QMatMul kernel packs
// and sums in another order; the group kernel must not): a speculative
// target's verification graph runs the group on k+1 rows, and its greedy
// output must be one-token decoding's. The row counts also change how the
// kernel cuts the weight rows into tasks, which the SwiGLU's activation
// must not notice.
func TestQMatMulGroupRowExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		dt  ir.DType
		ns  []int
		K   int
		act string
	}{
		{ir.Q8_0, []int{2048, 2048}, 768, "silu_mul"},
		{ir.Q4_0, []int{768, 256, 256}, 768, ""},
		{ir.Q4_K, []int{1000, 1000}, 256, "silu_mul"},
		{ir.Q6_K, []int{301, 77}, 512, ""},
		{ir.Float16, []int{2048, 2048}, 768, "silu_mul"},
		{ir.Float16, []int{1001}, 96, ""},
		{ir.BFloat16, []int{768, 256, 256}, 768, ""},
		{ir.BFloat16, []int{333, 333}, 200, "silu_mul"},
	} {
		for _, M := range []int{5, 40} {
			t.Run(fmt.Sprint(c.dt, c.ns, c.K, c.act, M), func(t *testing.T) {
				var ws []*ir.Tensor
				for _, n := range c.ns {
					var w *ir.Tensor
					switch c.dt {
					case ir.Q4_K, ir.Q6_K:
						w, _ = kQuantWeight(t, r, c.dt, n, c.K)
					case ir.Float16, ir.BFloat16:
						w = toHalf(randF32(r, int64(n), int64(c.K)), c.dt)
					default:
						var err error
						w, err = quant.Quantize(randF32(r, int64(n), int64(c.K)), c.dt)
						require.NoError(t, err)
					}
					ws = append(ws, w)
				}
				var attrs []ir.AttrOption
				nOut := len(c.ns)
				if c.act != "" {
					attrs, nOut = []ir.AttrOption{ir.Str("act", c.act)}, 1
				}
				// run computes the group on x [1, rows, K].
				run := func(x *ir.Tensor) []*ir.Tensor {
					in := append([]*ir.Tensor{x}, ws...)
					n := nodeN("QMatMulGroup", attrs, in, nOut)
					consts := make([]bool, len(in))
					for i := 1; i < len(in); i++ {
						consts[i] = true
					}
					out := make([]*ir.Tensor, nOut)
					for i := range out {
						out[i] = ir.NewTensor(ir.Float32, []int64{1, x.Shape[1], int64(c.ns[i])})
					}
					k, err := buildIntoForTest(n, in, out, consts)
					require.NoError(t, err)
					require.NotNil(t, k, "the group kernel declined")
					require.NoError(t, k(in, out))
					return out
				}
				x := randF32(r, 1, int64(M), int64(c.K))
				all := run(x)
				// Every row natively; under an emulator (arm64 in qemu) or
				// -short, the first two, a middle one and the last.
				check := make([]int, M)
				for m := range check {
					check[m] = m
				}
				if testing.Short() || goruntime.GOARCH != "amd64" {
					check = []int{0, 1, M / 2, M - 1}
				}
				for _, m := range check {
					row := ir.FromFloat32([]int64{1, 1, int64(c.K)}, x.Float32s()[m*c.K:(m+1)*c.K])
					one := run(row)
					for o := range one {
						N := c.ns[o]
						got, want := all[o].Float32s()[m*N:(m+1)*N], one[o].Float32s()
						for n := range want {
							if math.Float32bits(got[n]) != math.Float32bits(want[n]) {
								t.Fatalf("output %d row %d col %d: batched %v != alone %v", o, m, n, got[n], want[n])
							}
						}
					}
				}
			})
		}
	}
}
