package kernels

import "fmt"

// DepthwiseRows computes one channel of a depthwise convolution over a
// padded (and, for a strided conv, stride-phase split) plane b, row by
// row: for r < rows and q < ow,
//
//	y[r*ow+q] = bias + sum_t w[t] · b[off[t] + r*wq + q]
//
// then max(·, 0) with relu (NaN kept). Tap t reads the plane at its fixed
// offset off[t] (len(w) == len(off)); wq is the plane's row length. A
// 3×3 window (9 taps) has an AVX-512 kernel; others run a plain loop.
func DepthwiseRows(y []float32, rows, ow int, b []float32, wq int, off []int, w []float32, bias float32, relu bool) {
	if rows <= 0 || ow <= 0 {
		return
	}
	if len(off) == 0 || len(w) != len(off) || wq < ow || len(y) < rows*ow {
		panic(fmt.Sprintf("kernels: DepthwiseRows %d×%d, %d taps, %d weights, row length %d, %d outputs", rows, ow, len(off), len(w), wq, len(y)))
	}
	hi := 0
	for _, o := range off {
		if o < 0 {
			panic(fmt.Sprintf("kernels: DepthwiseRows tap offset %d", o))
		}
		hi = max(hi, o)
	}
	if hi+(rows-1)*wq+ow > len(b) {
		panic(fmt.Sprintf("kernels: DepthwiseRows reads up to %d of %d floats", hi+(rows-1)*wq+ow, len(b)))
	}
	if dwArch(y, rows, ow, b, wq, off, w, bias, relu) {
		return
	}
	for r := 0; r < rows; r++ {
		yr := y[r*ow : (r+1)*ow]
		for q := range yr {
			yr[q] = bias
		}
		for t, o := range off {
			wt := w[t]
			src := b[o+r*wq : o+r*wq+ow]
			for q, v := range src {
				yr[q] += wt * v
			}
		}
		if relu {
			for q, v := range yr {
				if v < 0 {
					yr[q] = 0
				}
			}
		}
	}
}

// DepthwiseFast reports whether DepthwiseRows has a SIMD kernel for the
// tap count at the current ISA level.
func DepthwiseFast(taps int) bool { return dwFast(taps) }
