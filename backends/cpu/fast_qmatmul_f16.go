package cpu

import (
	"slices"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

func init() { registerIntoFirst(buildFastHalfQMatMul, "QMatMul") }

// buildFastHalfQMatMul handles QMatMul with a constant F16 or BF16 weight
// [N, K] and float32 activations: the weight is read in place, or from
// its copy on huge pages where that applies (fast_weightcopy.go), and
// widened to f32 in registers by
// kernels.HalfMatMul: a streaming GEMV at one row, dot-product kernels for
// a few rows, and for many rows K tiles converted on the fly for the SGEMM
// micro-kernels. Other weight types decline (the block-quantized builder
// in fast_qmatmul.go takes those).
func buildFastHalfQMatMul(s *nodeSpec) intoKernel {
	x, w, y := s.input(0), s.input(1), s.out[0]
	if len(s.in) != 2 || len(s.out) != 1 || !x.ok || !w.ok || w.c == nil || x.dt != ir.Float32 || y.dt != ir.Float32 {
		return nil
	}
	if w.dt != ir.Float16 && w.dt != ir.BFloat16 || len(w.shape) != 2 || len(x.shape) < 1 {
		return nil
	}
	N, K := int(w.shape[0]), int(w.shape[1])
	if x.shape[len(x.shape)-1] != int64(K) {
		return nil
	}
	want := append(append([]int64{}, x.shape[:len(x.shape)-1]...), int64(N))
	if !slices.Equal(want, y.shape) || len(w.c.Data) != 2*N*K {
		return nil
	}
	M := 0
	if K > 0 {
		M = numel(x.shape) / K
	} else {
		M = numel(want) / max(N, 1)
	}
	dt, pool := w.dt, s.pool
	if M*N*K < 1<<16 { // tiny: not worth a hand-off (weights stream, so bytes matter more than MACs)
		pool = nil
	}
	// Scratch for the packed activations of the many-row path, so that a
	// run allocates nothing.
	var l layout
	aOff, aLen := 0, 0
	if M > 1 {
		aLen = M * K
		aOff = l.add(aLen)
	}
	s.scratch = l.bytes()
	// A copy on huge pages where that applies (fast_weightcopy.go).
	c := residentWeight(w.c.Data, N, K)
	s.streams(w.c.Data, c)
	return func(in, out []*ir.Tensor, scratch []byte) error {
		var abuf []float32
		if aLen > 0 {
			abuf = region(scratch, aOff, aLen)
		}
		wd := in[1].Data
		if c != nil {
			wd = c.data
		}
		return kernels.HalfMatMulBuf(pool, dt, wd, N, K, in[0].Float32s(), K, M, out[0].Float32s(), N, abuf)
	}
}
