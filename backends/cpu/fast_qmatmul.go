package cpu

import (
	"slices"
	"sync"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/ir"
)

func init() { registerIntoFirst(buildFastQMatMul, "QMatMul") }

// qactsPool holds activation buffers for QMatMul; each run takes one, so
// concurrent runs never share, and a warm pool makes runs allocation-free.
var qactsPool = sync.Pool{New: func() any { return new(kernels.QuantizedActs) }}

// buildFastQMatMul handles QMatMul with a constant Q8_0, Q4_0, Q4_K or Q6_K
// weight and float32 activations: the activations are quantized to q8
// blocks of 32 once, then integer dot products per block (per K-quant
// sub-block). Other weight types decline. The kernel reads its own copy
// of the weight (fast_weightcopy.go): Q4_0 and Q8_0 repacked where the
// CPU has their packed kernels, others on huge pages where that applies.
func buildFastQMatMul(s *nodeSpec) intoKernel {
	x, w, y := s.input(0), s.input(1), s.out[0]
	if len(s.in) != 2 || len(s.out) != 1 || !x.ok || !w.ok || w.c == nil || x.dt != ir.Float32 || y.dt != ir.Float32 {
		return nil
	}
	if len(w.shape) != 2 || len(x.shape) < 1 {
		return nil
	}
	N, K := int(w.shape[0]), int(w.shape[1])
	switch w.dt {
	case ir.Q8_0, ir.Q4_0:
	case ir.Q4_K, ir.Q6_K:
		if K%256 != 0 {
			return nil
		}
	default:
		return nil
	}
	if K == 0 || K%32 != 0 || x.shape[len(x.shape)-1] != int64(K) {
		return nil
	}
	want := append(append([]int64{}, x.shape[:len(x.shape)-1]...), int64(N))
	if !slices.Equal(want, y.shape) || int64(len(w.c.Data)) != w.dt.Bytes(int64(N)*int64(K)) {
		return nil
	}
	M := numel(x.shape) / K
	dt, pool := w.dt, s.pool
	// The kernel's copy of the weight (fast_weightcopy.go), which it
	// holds: Q4_0 or Q8_0 repacked, or else a copy on huge pages; nil
	// where it reads the constant in place.
	var c *weightCopy
	packed := packOn(dt)
	if packed {
		c = sharedPack(dt, w.c.Data, N, K)
		packed = c != nil
	}
	if !packed {
		c = residentWeight(w.c.Data, N, K)
	}
	s.streams(w.c.Data, c)
	return func(in, out []*ir.Tensor, _ []byte) error {
		q := qactsPool.Get().(*kernels.QuantizedActs)
		defer qactsPool.Put(q)
		if err := kernels.QuantizeActs(q, in[0].Float32s(), K, M, K); err != nil {
			return err
		}
		wd := in[1].Data
		if c != nil {
			wd = c.data
		}
		if packed {
			return kernels.QMatMulPacked(pool, dt, wd, N, q, out[0].Float32s(), N, c.prefetch())
		}
		return kernels.QMatMul(pool, dt, wd, N, q, out[0].Float32s(), N)
	}
}
