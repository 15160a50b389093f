package cpu

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// kQuantWeight returns an N×K weight of the K-quant dt (Q4_K from weft's
// encoder, Q6_K as random codes and scales with a small d) and its values
// decoded by ir/quant, transposed to K×N float32.
func kQuantWeight(t *testing.T, r *rand.Rand, dt ir.DType, N, K int) (w, wT *ir.Tensor) {
	t.Helper()
	w = ir.NewTensor(dt, []int64{int64(N), int64(K)})
	rb := int(dt.Bytes(int64(K)))
	for n := 0; n < N; n++ {
		row := w.Data[n*rb : (n+1)*rb]
		if dt == ir.Q4_K {
			require.NoError(t, quant.EncodeRow(dt, row, randF32(r, int64(K)).Float32s()))
			continue
		}
		for i := range row {
			row[i] = byte(r.Uint32())
		}
		for sb := 0; sb < K/256; sb++ {
			binary.LittleEndian.PutUint16(row[sb*210+208:], ir.F32ToF16(float32(r.Float64()*0.002+0.0001)))
		}
	}
	dec := make([]float32, N*K)
	require.NoError(t, quant.DecodeRow(dt, dec, w.Data))
	wT = ir.NewTensor(ir.Float32, []int64{int64(K), int64(N)})
	v := wT.Float32s()
	for n := 0; n < N; n++ {
		for k := 0; k < K; k++ {
			v[k*N+n] = dec[n*K+k]
		}
	}
	return w, wT
}

// TestFastQMatMulKQuants runs QMatMul on Q4_K and Q6_K weights through the
// fast kernel at every ISA level. The oracle is the reference MatMul of the
// activations rounded as the kernel quantizes them (q8Round) by the decoded,
// transposed weight: QMatMul's meaning (ir/ops.go).
func TestFastQMatMulKQuants(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(19, 20))
		for _, dt := range []ir.DType{ir.Q4_K, ir.Q6_K} {
			for _, c := range []struct {
				n  int
				xs []int64
			}{{37, []int64{1, 512}}, {5, []int64{2, 7, 256}}, {130, []int64{33, 768}}} {
				t.Run(fmt.Sprint(dt, c.n, c.xs), func(t *testing.T) {
					K := int(c.xs[len(c.xs)-1])
					w, wT := kQuantWeight(t, r, dt, c.n, K)
					x := randF32(r, c.xs...)
					want := refRun(t, nodeN("MatMul", nil, []*ir.Tensor{x, wT}, 1), []*ir.Tensor{q8Round(x), wT})[0]
					n := nodeN("QMatMul", nil, []*ir.Tensor{x, w}, 1)
					out := ir.NewTensor(ir.Float32, want.Shape)
					spec := &nodeSpec{n: n, pool: poolFor(2), out: []arg{{dt: ir.Float32, shape: want.Shape, ok: true}},
						in: []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: dt, shape: w.Shape, ok: true, c: w}}}
					k := buildFastQMatMul(spec)
					require.NotNil(t, k)
					require.NoError(t, k([]*ir.Tensor{x, w}, []*ir.Tensor{out}, nil))
					requireClose(t, want, out, 1e-4)
				})
			}
		}
	})
}

// TestFastQMatMulKQuantDeclines: a K-quant weight whose K is not a whole
// number of super-blocks is not the fast kernel's.
func TestFastQMatMulKQuantDeclines(t *testing.T) {
	x := ir.NewTensor(ir.Float32, []int64{2, 96})
	w := &ir.Tensor{DType: ir.Q6_K, Shape: []int64{3, 96}} // 96 is no whole super-block
	n := nodeN("QMatMul", nil, []*ir.Tensor{x, w}, 1)
	spec := &nodeSpec{n: n, pool: poolFor(0), out: []arg{{dt: ir.Float32, shape: []int64{2, 3}, ok: true}},
		in: []arg{{dt: ir.Float32, shape: x.Shape, ok: true}, {dt: ir.Q6_K, shape: w.Shape, ok: true, c: w}}}
	require.Nil(t, buildFastQMatMul(spec))
}
