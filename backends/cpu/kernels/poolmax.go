package kernels

import "fmt"

// MaxPool3S2Row computes one output row of a max pool whose columns are 3
// wide, stride 2, one column of padding before (ResNet's stem pool): with
// r0, r1 and r2 the window's input rows (each of the same width W; pass a
// row twice where the window has fewer in-bounds rows),
//
//	dst[o] = max over r in {r0, r1, r2}, c in {2o-1, 2o, 2o+1} ∩ [0, W) of r[c]
//
// for o < len(dst). Every window must read a column: len(dst) <= (W+2)/2.
// A NaN among the taps yields NaN.
func MaxPool3S2Row(dst, r0, r1, r2 []float32) {
	W, OW := len(r0), len(dst)
	if OW == 0 {
		return
	}
	if len(r1) != W || len(r2) != W || W == 0 || OW > (W+2)/2 {
		panic(fmt.Sprintf("kernels: MaxPool3S2Row %d outputs from rows of %d, %d, %d floats", OW, W, len(r1), len(r2)))
	}
	if maxPool3S2RowArch(dst, r0, r1, r2) {
		return
	}
	maxPool3S2RowGo(dst, r0, r1, r2)
}

// maxPool3S2RowGo is MaxPool3S2Row in Go.
func maxPool3S2RowGo(dst, r0, r1, r2 []float32) {
	W := len(r0)
	for o := range dst {
		best := float32(0)
		first := true
		for c := 2*o - 1; c <= 2*o+1; c++ {
			if c < 0 || c >= W {
				continue
			}
			for _, x := range [3]float32{r0[c], r1[c], r2[c]} {
				if first || x > best || x != x {
					best, first = x, false
				}
			}
		}
		dst[o] = best
	}
}

// MaxPool3S2RowVector reports whether MaxPool3S2Row runs a vector kernel
// at the current ISA level (otherwise it is a scalar loop).
func MaxPool3S2RowVector() bool { return maxPool3S2RowVector() }
