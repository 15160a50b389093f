package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// TestQ4Pack checks the packed Q4_0 path of QMatMul (fast_q4pack.go):
// its outputs against the reference kernel on q8-rounded activations and
// against the same kernel with packing off (WEFT_Q4PACK=0: the GGUF-layout
// kernels, which sum in another order), both to 1e-4 relative (the packed
// kernels measured closer to the reference: 1.1e-5 against 2.5e-5 at
// K = 4864), for row lengths with and without a short group and several
// activation rows; and that a second kernel built on the same constant
// shares the first's packing.
func TestQ4Pack(t *testing.T) {
	if !kernels.Q4PackedSupported() {
		t.Skip("no AVX-512 VNNI: Q4_0 weights are not packed here")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct{ M, N, K int }{{1, 70, 768}, {3, 33, 896}, {9, 130, 544}, {1, 5, 32}, {17, 64, 4864}} {
		t.Run(fmt.Sprint(c.M, c.N, c.K), func(t *testing.T) {
			x := randF32(r, 1, int64(c.M), int64(c.K))
			w, err := quant.Quantize(randF32(r, int64(c.N), int64(c.K)), ir.Q4_0)
			require.NoError(t, err)
			in := []*ir.Tensor{x, w}
			n := node("QMatMul", nil, in)
			want := refRun(t, n, []*ir.Tensor{q8Round(x), w})[0]
			build := func() *ir.Tensor {
				got := ir.NewTensor(ir.Float32, want.Shape)
				k, err := buildIntoForTest(n, in, []*ir.Tensor{got}, []bool{false, true})
				require.NoError(t, err)
				require.NotNil(t, k)
				require.NoError(t, k(in, []*ir.Tensor{got}))
				return got
			}
			c0, b0 := q4PackCount.Load(), PackedWeightBytes()
			packed := build()
			require.Equal(t, c0+1, q4PackCount.Load(), "one packing")
			require.Equal(t, b0+int64(len(w.Data)), PackedWeightBytes())
			again := build()
			require.Equal(t, c0+1, q4PackCount.Load(), "the second kernel shares the packing")
			require.Equal(t, packed.Float32s(), again.Float32s())
			requireClose(t, want, packed, 1e-4)
			t.Setenv("WEFT_Q4PACK", "0")
			plain := build()
			require.Equal(t, c0+1, q4PackCount.Load(), "WEFT_Q4PACK=0 packs nothing")
			requireClose(t, plain, packed, 1e-4)
		})
	}
}
