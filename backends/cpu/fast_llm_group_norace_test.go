//go:build !race

package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// TestQMatMulGroupDoesNotAllocate: a warm group kernel (decode: one row;
// Q4_0 q/k/v, F16 gate/up) runs without allocating. (Not under -race,
// whose sync.Pool drops items at random.)
func TestQMatMulGroupDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	x := randF32(r, 1, 1, 128)
	q0, err := quant.Quantize(randF32(r, 96, 128), ir.Q4_0)
	require.NoError(t, err)
	q1, err := quant.Quantize(randF32(r, 64, 128), ir.Q4_0)
	require.NoError(t, err)
	h0, h1 := toHalf(randF32(r, 200, 128), ir.Float16), toHalf(randF32(r, 200, 128), ir.Float16)
	for _, c := range []struct {
		in    []*ir.Tensor
		attrs []ir.AttrOption
		nOut  int
	}{
		{[]*ir.Tensor{x, q0, q1, q1}, nil, 3},
		{[]*ir.Tensor{x, h0, h1}, []ir.AttrOption{ir.Str("act", "silu_mul")}, 1},
	} {
		n := nodeN("QMatMulGroup", c.attrs, c.in, c.nOut)
		want := refRun(t, n, c.in)
		out := make([]*ir.Tensor, c.nOut)
		for i := range out {
			out[i] = ir.NewTensor(ir.Float32, want[i].Shape)
		}
		consts := []bool{false, true, true, true}
		k, err := buildIntoForTest(n, c.in, out, consts[:len(c.in)])
		require.NoError(t, err)
		require.NotNil(t, k)
		require.NoError(t, k(c.in, out))
		allocs := testing.AllocsPerRun(20, func() {
			if err := k(c.in, out); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "%v", n.Inputs[1].DType)
	}
}
