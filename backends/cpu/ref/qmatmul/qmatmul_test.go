package qmatmul

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/ref"
	_ "github.com/weftrt/weft/backends/cpu/ref/nn" // the MatMul oracle
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

func call(op string, in ...*ir.Tensor) ([]*ir.Tensor, error) {
	k, ok := ref.Lookup(op)
	if !ok {
		return nil, errors.New("no kernel for " + op)
	}
	n := &ir.Node{Name: "t", Op: op, Attrs: ir.Attrs{}, Outputs: []*ir.Value{{}}}
	return k(&ref.Context{}, n, in)
}

func randTensor(rng *rand.Rand, dt ir.DType, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat64(i, rng.NormFloat64())
	}
	return t
}

// transpose returns the [K, N] float32 transpose of a [N, K] float32 tensor.
func transpose(w *ir.Tensor) *ir.Tensor {
	n, k := w.Shape[0], w.Shape[1]
	out := ir.NewTensor(ir.Float32, []int64{k, n})
	src, dst := w.Float32s(), out.Float32s()
	for i := int64(0); i < n; i++ {
		for j := int64(0); j < k; j++ {
			dst[j*n+i] = src[i*k+j]
		}
	}
	return out
}

// QMatMul(X, W) is MatMul(X, decode(W)ᵀ) bit for bit, on odd shapes, for
// every weight format and both float input types.
func TestQMatMulIsMatMulOfDecodedWeight(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	type format struct {
		dt ir.DType // Int8: per-channel with Scales
		k  int64
	}
	formats := []format{{ir.Q8_0, 64}, {ir.Q4_0, 96}, {ir.Q4_1, 32}, {ir.Q5_0, 64}, {ir.Q5_1, 32}, {ir.Int8, 37}, {ir.Int8, 1}, {ir.Float16, 37}, {ir.BFloat16, 64}, {ir.Float16, 1}, {ir.Q4_K, 256}, {ir.Q5_K, 512}, {ir.Q6_K, 256}}
	for _, f := range formats {
		for _, xdt := range []ir.DType{ir.Float32, ir.Float16} {
			for _, lead := range [][]int64{nil, {1}, {5}, {2, 3}} {
				name := fmt.Sprintf("%v/K%d/x%v%v", f.dt, f.k, xdt, lead)
				t.Run(name, func(t *testing.T) {
					const n = 7
					wf := randTensor(rng, ir.Float32, n, f.k)
					var in []*ir.Tensor
					var deq *ir.Tensor
					switch {
					case f.dt == ir.Float16 || f.dt == ir.BFloat16:
						q := convert(wf, f.dt)
						deq = convert(q, ir.Float32)
						in = []*ir.Tensor{q}
					case f.dt == ir.Int8:
						q, s, err := quant.QuantizePerChannel(wf)
						require.NoError(t, err)
						deq, err = quant.DequantizePerChannel(q, s)
						require.NoError(t, err)
						in = []*ir.Tensor{q, s}
					case f.dt == ir.Q4_K || f.dt == ir.Q5_K || f.dt == ir.Q6_K:
						q := randKQuant(rng, f.dt, n, f.k)
						var err error
						deq, err = quant.Dequantize(q)
						require.NoError(t, err)
						in = []*ir.Tensor{q}
					default:
						q, err := quant.Quantize(wf, f.dt)
						require.NoError(t, err)
						deq, err = quant.Dequantize(q)
						require.NoError(t, err)
						in = []*ir.Tensor{q}
					}
					x := randTensor(rng, xdt, append(append([]int64{}, lead...), f.k)...)
					got, err := call("QMatMul", append([]*ir.Tensor{x}, in...)...)
					require.NoError(t, err)
					require.NoError(t, got[0].Check())
					require.Equal(t, xdt, got[0].DType)
					// The oracle: MatMul in f64 (which sums in the same
					// order), rounded once to X's dtype.
					want, err := call("MatMul", convert(x, ir.Float64), convert(transpose(deq), ir.Float64))
					require.NoError(t, err)
					require.Equal(t, want[0].Shape, got[0].Shape)
					require.Equal(t, convert(want[0], xdt).Data, got[0].Data)
					if xdt == ir.Float32 { // and directly against the f32 MatMul
						want, err = call("MatMul", x, transpose(deq))
						require.NoError(t, err)
						require.Equal(t, want[0].Data, got[0].Data)
					}
				})
			}
		}
	}
}

// randKQuant returns an n×k K-quant weight of random bytes with small
// finite f16 super-block scales (d, and dmin where the format has one).
func randKQuant(rng *rand.Rand, dt ir.DType, n, k int64) *ir.Tensor {
	w := ir.NewTensor(dt, []int64{n, k})
	rng.Read(w.Data)
	bb := dt.BlockBytes()
	at := map[ir.DType][]int{ir.Q4_K: {0, 2}, ir.Q5_K: {0, 2}, ir.Q6_K: {208}}[dt]
	for b := 0; b < len(w.Data)/bb; b++ {
		for _, o := range at {
			binary.LittleEndian.PutUint16(w.Data[b*bb+o:], ir.F32ToF16(float32(rng.Float64()*0.02-0.005)))
		}
	}
	return w
}

// convert returns x converted to dt (one rounding per element).
func convert(x *ir.Tensor, dt ir.DType) *ir.Tensor {
	out := ir.NewTensor(dt, x.Shape)
	for i := 0; i < x.Len(); i++ {
		out.SetFloat64(i, x.Float64(i))
	}
	return out
}

// A hand-checked product: W = [[1, 2, ...]] in Q8_0 with d = 1.
func TestQMatMulByHand(t *testing.T) {
	w := ir.NewTensor(ir.Q8_0, []int64{2, 32})
	for r := 0; r < 2; r++ {
		blk := w.Data[r*34:]
		blk[0], blk[1] = 0x00, 0x3c // d = 1
		for j := 0; j < 32; j++ {
			blk[2+j] = byte(int8(j * (1 - 2*r))) // row 0: j, row 1: -j
		}
	}
	x := ir.NewTensor(ir.Float32, []int64{32})
	x.SetFloat64(3, 2)
	x.SetFloat64(31, 1)
	got, err := call("QMatMul", x, w)
	require.NoError(t, err)
	require.Equal(t, []int64{2}, got[0].Shape)
	require.Equal(t, []float32{2*3 + 31, -(2*3 + 31)}, got[0].Float32s())
}

func TestQMatMulErrors(t *testing.T) {
	x := ir.NewTensor(ir.Float32, []int64{2, 32})
	q8 := ir.NewTensor(ir.Q8_0, []int64{3, 32})
	i8 := ir.NewTensor(ir.Int8, []int64{3, 32})
	s3 := ir.NewTensor(ir.Float32, []int64{3})
	for _, tc := range []struct {
		name        string
		in          []*ir.Tensor
		msg         string
		unsupported bool
	}{
		{"int8 without scales", []*ir.Tensor{x, i8}, "needs Scales [3]", false},
		{"scales with blocks", []*ir.Tensor{x, q8, s3}, "scales are in the blocks", false},
		{"scales with f16", []*ir.Tensor{x, ir.NewTensor(ir.Float16, []int64{3, 32}), s3}, "want none", false},
		{"wrong scales", []*ir.Tensor{x, i8, ir.NewTensor(ir.Float32, []int64{2})}, "f32[3]", false},
		{"inner dims", []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{2, 64}), q8}, "inner dims differ", false},
		{"scalar input", []*ir.Tensor{ir.NewTensor(ir.Float32, nil), q8}, "rank >= 1", false},
		{"1-D weight", []*ir.Tensor{x, ir.NewTensor(ir.Q8_0, []int64{32})}, "2-D", false},
		{"int input", []*ir.Tensor{ir.NewTensor(ir.Int32, []int64{2, 32}), q8}, "unsupported", true},
		{"f32 weight", []*ir.Tensor{x, ir.NewTensor(ir.Float32, []int64{3, 32})}, "unsupported", true},
		{"unknown weight type", []*ir.Tensor{x, {DType: ir.DType(250), Shape: []int64{3, 32}}}, "unsupported", true},
		{"k-quant short K", []*ir.Tensor{x, {DType: ir.Q4_K, Shape: []int64{3, 32}}}, "multiple of the block size 256", false},
		{"short data", []*ir.Tensor{x, {DType: ir.Q8_0, Shape: []int64{3, 32}, Data: make([]byte, 10)}}, "want 102", false},
		{"missing W", []*ir.Tensor{x, nil}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call("QMatMul", tc.in...)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.msg)
			require.Equal(t, tc.unsupported, errors.Is(err, ir.ErrUnsupported), "%v", err)
		})
	}
}
