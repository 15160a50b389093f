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

// TestPrefetchFor checks streamPrefetch's rule: weights are streamed
// non-temporally only where more pass through each die's last-level cache
// than it holds, with maxDieCache for an unknown cache, and only on a CPU
// where the hint pays.
func TestPrefetchFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		bytes, llc int64
		dies       int
		want       kernels.Prefetch
	}{
		{62 * mb, 32 * mb, 1, kernels.PrefetchStream}, // Llama-110M Q4_0, one die
		{62 * mb, 32 * mb, 2, kernels.PrefetchKeep},   // its halves in two L3s
		{32 * mb, 32 * mb, 1, kernels.PrefetchKeep},   // exactly fits
		{32*mb + 1, 32 * mb, 1, kernels.PrefetchStream},
		{266 * mb, 32 * mb, 2, kernels.PrefetchStream},
		{62 * mb, 0, 1, kernels.PrefetchKeep}, // unknown: within maxDieCache
		{266 * mb, 0, 2, kernels.PrefetchStream},
		{2 * maxDieCache, 0, 2, kernels.PrefetchKeep},
		{0, 32 * mb, 0, kernels.PrefetchKeep},
	} {
		require.Equal(t, c.want, prefetchFor(c.bytes, c.llc, c.dies, true), "%d bytes, LLC %d, %d dies", c.bytes, c.llc, c.dies)
		// Where the hint does not pay, every stream is kept.
		require.Equal(t, kernels.PrefetchKeep, prefetchFor(c.bytes, c.llc, c.dies, false), "%d bytes, LLC %d, %d dies, no stream hint", c.bytes, c.llc, c.dies)
	}
}

// TestStreamedWeights checks what the decode GEMV kernels report they
// stream (nodeSpec.streams, which the executor's prefetch rule sums): the
// bytes of every constant weight, with the copies they read; and that a
// copy's prefetch mode changes no result, bit for bit.
func TestStreamedWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	K := 96
	x := randF32(r, 1, 1, int64(K))
	for _, c := range []struct {
		op string
		dt ir.DType
		ns []int
	}{
		{"QMatMul", ir.Q4_0, []int{70}},
		{"QMatMul", ir.Q8_0, []int{33}},
		{"QMatMulGroup", ir.Q4_0, []int{40, 24, 24}},
		{"QMatMulGroup", ir.Q8_0, []int{17, 9}},
	} {
		t.Run(fmt.Sprint(c.op, c.dt, c.ns), func(t *testing.T) {
			in := []*ir.Tensor{x}
			constIn := []bool{false}
			var bytes int64
			for _, n := range c.ns {
				w, err := quant.Quantize(randF32(r, int64(n), int64(K)), c.dt)
				require.NoError(t, err)
				in = append(in, w)
				constIn = append(constIn, true)
				bytes += int64(len(w.Data))
			}
			var out []*ir.Tensor
			for _, n := range c.ns {
				out = append(out, ir.NewTensor(ir.Float32, []int64{1, 1, int64(n)}))
			}
			n := nodeN(c.op, nil, in, len(out))
			spec := specFor(n, in, out, constIn, 2)
			k := build(c.op, spec)
			require.NotNil(t, k)
			require.Equal(t, bytes, spec.streamed)
			packed := packOn(c.dt)
			if packed {
				require.Len(t, spec.copies, len(c.ns), "one packed copy per weight")
			}
			run := func() [][]float32 {
				var ys [][]float32
				require.NoError(t, k(in, out, ir.AlignedBytes(spec.scratch)))
				for _, y := range out {
					ys = append(ys, append([]float32(nil), y.Float32s()...))
				}
				return ys
			}
			keep := run()
			for _, cp := range spec.copies {
				cp.pf.Store(uint32(kernels.PrefetchStream))
			}
			streamed := run()
			for _, cp := range spec.copies {
				cp.pf.Store(uint32(kernels.PrefetchKeep))
			}
			require.Equal(t, keep, streamed, "the prefetch mode changed a result")
		})
	}
}
