package kernels

import "fmt"

// Max pooling rows. A 2-D max pool is, per output row, a vertical max of
// the window's input rows (MaxRows) and then a horizontal max over each
// output's taps in that row (MaxPoolRow). NaN propagates: a window holding
// a NaN yields NaN.

// MaxRows writes dst[i] = max(a[i], b[i]) (NaN if either is NaN); dst may
// be a or b.
func MaxRows(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	if maxRowsArch(dst, a, b) {
		return
	}
	for i, x := range a {
		y := b[i]
		if y > x || y != y {
			x = y
		}
		dst[i] = x
	}
}

// MaxPoolRowSlack is how many floats MaxPoolRow may read past the last tap
// of the last output (its vector loads); v sized for it runs fastest.
const MaxPoolRowSlack = 64

// MaxPoolRow writes dst[o] = max over k of v[o*stride + offs[k]] for every
// o < len(dst) (offs non-empty, each >= 0). A NaN among the taps yields
// NaN.
func MaxPoolRow(dst, v []float32, offs []int, stride int) {
	if len(dst) == 0 {
		return
	}
	maxOff := 0
	for _, o := range offs {
		if o < 0 {
			panic(fmt.Sprintf("kernels: MaxPoolRow offset %d", o))
		}
		maxOff = max(maxOff, o)
	}
	if len(offs) == 0 || stride < 1 || (len(dst)-1)*stride+maxOff >= len(v) {
		panic(fmt.Sprintf("kernels: MaxPoolRow %d outputs, stride %d, %d taps up to %d over %d floats", len(dst), stride, len(offs), maxOff, len(v)))
	}
	if maxPoolRowArch(dst, v, offs, stride, maxOff) {
		return
	}
	for o := range dst {
		base := o * stride
		best := v[base+offs[0]]
		for _, k := range offs[1:] {
			if x := v[base+k]; x > best || x != x {
				best = x
			}
		}
		dst[o] = best
	}
}

// copyTap is the single zero-offset tap of CopyStrided.
var copyTap = []int{0}

// CopyStrided writes dst[i] = src[i*stride] (a stride-phase split of an
// input row). Stride 2 runs 16 lanes at a time where src has
// MaxPoolRowSlack floats to spare after the last element read.
func CopyStrided(dst, src []float32, stride int) {
	if len(dst) == 0 {
		return
	}
	if stride < 1 || (len(dst)-1)*stride >= len(src) {
		panic(fmt.Sprintf("kernels: CopyStrided %d elements at stride %d from %d floats", len(dst), stride, len(src)))
	}
	if stride <= 2 && maxPoolRowArch(dst, src, copyTap, stride, 0) {
		return
	}
	for i := range dst {
		dst[i] = src[i*stride]
	}
}
