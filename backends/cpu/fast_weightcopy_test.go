package cpu

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/internal/mmapfile"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// TestQPack checks the packed Q4_0 and Q8_0 paths of QMatMul
// (fast_weightcopy.go):
// its outputs against the reference kernel on q8-rounded activations and
// against the same kernel with copies off (WEFT_WEIGHT_COPY=0: the GGUF-layout
// kernels, which sum in another order), both to 1e-4 relative (the packed
// kernels measured closer to the reference: 1.1e-5 against 2.5e-5 at
// K = 4864), for row lengths with and without a short group and several
// activation rows; and that a second kernel built on the same constant
// shares the first's packing.
func TestQPack(t *testing.T) {
	for _, dt := range []ir.DType{ir.Q4_0, ir.Q8_0} {
		t.Run(dt.String(), func(t *testing.T) {
			if !kernels.PackedSupported(dt) {
				t.Skipf("%v weights are not packed here (no AVX-512 VNNI, or AVX2 for q4_0)", dt)
			}
			testQPack(t, dt)
		})
	}
}

func testQPack(t *testing.T, dt ir.DType) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct{ M, N, K int }{{1, 70, 768}, {3, 33, 896}, {9, 130, 544}, {1, 5, 32}, {17, 64, 4864}} {
		t.Run(fmt.Sprint(c.M, c.N, c.K), func(t *testing.T) {
			x := randF32(r, 1, int64(c.M), int64(c.K))
			w, err := quant.Quantize(randF32(r, int64(c.N), int64(c.K)), dt)
			require.NoError(t, err)
			in := []*ir.Tensor{x, w}
			n := node("QMatMul", nil, in)
			want := refRun(t, n, []*ir.Tensor{q8Round(x), w})[0]
			// The kernels built are kept alive to the end: a packing is
			// shared while a kernel holds it, and a garbage collection
			// may free it as soon as none does.
			var kept []any
			build := func() *ir.Tensor {
				got := ir.NewTensor(ir.Float32, want.Shape)
				k, err := buildIntoForTest(n, in, []*ir.Tensor{got}, []bool{false, true})
				require.NoError(t, err)
				require.NotNil(t, k)
				require.NoError(t, k(in, []*ir.Tensor{got}))
				kept = append(kept, k)
				return got
			}
			defer runtime.KeepAlive(&kept)
			c0 := weightCopies.Load()
			packed := build()
			require.Equal(t, c0+1, weightCopies.Load(), "one packing")
			// The packing is the weight's size, and the live copies'
			// count includes it. (Not an exact difference of the count:
			// a GC may free earlier tests' copies at any time.)
			pk := sharedPack(dt, w.Data, c.N, c.K)
			require.NotNil(t, pk)
			require.Len(t, pk.data, len(w.Data))
			require.GreaterOrEqual(t, WeightCopyBytes(), int64(len(w.Data)))
			again := build()
			require.Equal(t, c0+1, weightCopies.Load(), "the second kernel shares the packing")
			require.Equal(t, packed.Float32s(), again.Float32s())
			requireClose(t, want, packed, 1e-4)
			t.Setenv("WEFT_WEIGHT_COPY", "0")
			plain := build()
			require.Equal(t, c0+1, weightCopies.Load(), "WEFT_WEIGHT_COPY=0 copies nothing")
			requireClose(t, plain, packed, 1e-4)
		})
	}
}

// TestWeightCopy checks the copies of weights in a file mapping
// (fast_weightcopy.go): a QMatMul kernel on a Q8_0, F16 or (with
// WEFT_Q4PACK=0) Q4_0 weight mapped from a file reads a copy where
// transparent huge pages are available, and computes bit for bit what it
// computes reading the mapping in place (WEFT_WEIGHT_COPY=0); the same
// weight in Go memory is read in place.
func TestWeightCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	t.Setenv("WEFT_Q4PACK", "0")
	t.Setenv("WEFT_Q8PACK", "0")
	for _, dt := range []ir.DType{ir.Q8_0, ir.Float16, ir.Q4_0} {
		t.Run(dt.String(), func(t *testing.T) {
			const M, N, K = 3, 40, 256
			x := randF32(r, 1, M, K)
			w, mapped := mappedWeight(t, r, dt, N, K)
			data := mapped.Data
			run := func(w *ir.Tensor) ([]float32, int64) {
				in := []*ir.Tensor{x, w}
				n := node("QMatMul", nil, in)
				got := ir.NewTensor(ir.Float32, []int64{1, M, N})
				c0 := weightCopies.Load()
				k, err := buildIntoForTest(n, in, []*ir.Tensor{got}, []bool{false, true})
				require.NoError(t, err)
				require.NotNil(t, k)
				require.NoError(t, k(in, []*ir.Tensor{got}))
				return got.Float32s(), weightCopies.Load() - c0
			}
			copied, nc := run(mapped)
			if hugeOK && mmapfile.Mapped(data) {
				require.Equal(t, int64(1), nc, "one copy of the mapped weight")
			}
			inHeap, nh := run(w)
			require.Equal(t, int64(0), nh, "a weight in Go memory is read in place")
			t.Setenv("WEFT_WEIGHT_COPY", "0")
			inPlace, n0 := run(mapped)
			require.Equal(t, int64(0), n0)
			require.Equal(t, inPlace, copied)
			require.Equal(t, inPlace, inHeap)
		})
	}
}

// TestQGatherReadsCopy: where a QMatMul kernel holds a copy of a table
// mapped from a file (a classifier sharing the token embedding), QGather
// reads its rows from the copy (seen by changing a byte of the copy),
// unpacking packed Q4_0 and Q8_0 rows, with the reference's bits.
func TestQGatherReadsCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, c := range []struct {
		dt   ir.DType
		pack bool
	}{{ir.Q8_0, false}, {ir.Float16, false}, {ir.Q4_0, false}, {ir.Q4_0, true}, {ir.Q8_0, true}} {
		t.Run(fmt.Sprint(c.dt, c.pack), func(t *testing.T) {
			if c.pack && !kernels.PackedSupported(c.dt) {
				t.Skipf("%v weights are not packed here", c.dt)
			}
			if !c.pack {
				t.Setenv("WEFT_Q4PACK", "0")
				t.Setenv("WEFT_Q8PACK", "0")
			}
			const V, D = 37, 96 // D: three Q4_0 blocks, a short group
			w, mapped := mappedWeight(t, r, c.dt, V, D)
			data := mapped.Data
			x := randF32(r, 1, 1, D)
			mmIn := []*ir.Tensor{x, mapped}
			mm, err := buildIntoForTest(node("QMatMul", nil, mmIn), mmIn, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{1, 1, V})}, []bool{false, true})
			require.NoError(t, err)
			cp := liveCopy(data, V, D)
			if cp == nil {
				t.Skip("no copy of the mapped weight here (no transparent huge pages)")
			}
			require.Equal(t, c.pack, cp.packed != ir.Invalid)

			idx := ir.FromInt64([]int64{1, 4}, []int64{5, 0, 36, 5})
			in := []*ir.Tensor{mapped, idx}
			n := node("QGather", nil, in)
			want := refRun(t, n, []*ir.Tensor{w, idx})[0]
			got := ir.NewTensor(ir.Float32, want.Shape)
			k, err := buildIntoForTest(n, in, []*ir.Tensor{got}, []bool{true})
			require.NoError(t, err)
			require.NoError(t, k(in, []*ir.Tensor{got}))
			require.Equal(t, want.Float32s(), got.Float32s())

			// Row 5's first two bytes, in both layouts its first block's
			// scale (F16: its first element), zeroed in the copy only.
			rb := len(data) / V
			saved := [2]byte{cp.data[5*rb], cp.data[5*rb+1]}
			cp.data[5*rb], cp.data[5*rb+1] = 0, 0
			require.NoError(t, k(in, []*ir.Tensor{got}))
			cp.data[5*rb], cp.data[5*rb+1] = saved[0], saved[1]
			g, wv := got.Float32s(), want.Float32s()
			require.Equal(t, float32(0), g[0], "row 5 read from the copy")
			require.Equal(t, float32(0), g[3*D], "row 5 again")
			require.Equal(t, wv[D:3*D], g[D:3*D], "rows 0 and 36 as they were")
			runtime.KeepAlive(mm)
		})
	}
}

// mappedWeight returns a random N×K weight of dt (F16 or a quantized
// type) in Go memory and the same bytes mapped from a file, unmapped when
// the test ends.
func mappedWeight(t *testing.T, r *rand.Rand, dt ir.DType, N, K int64) (w, mapped *ir.Tensor) {
	t.Helper()
	if dt == ir.Float16 {
		w = toHalf(randF32(r, N, K), dt)
	} else {
		var err error
		w, err = quant.Quantize(randF32(r, N, K), dt)
		require.NoError(t, err)
	}
	path := filepath.Join(t.TempDir(), "w.bin")
	require.NoError(t, os.WriteFile(path, w.Data, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	data, unmap, err := mmapfile.Map(f)
	require.NoError(t, err)
	t.Cleanup(func() { unmap() })
	return w, &ir.Tensor{DType: w.DType, Shape: w.Shape, Data: data}
}
