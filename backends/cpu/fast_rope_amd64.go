//go:build !noasm

package cpu

import "github.com/weftrt/weft/backends/cpu/kernels"

//go:noescape
func ropeHalfAVX512(x1, x2, c, s, y1, y2 *float32, n int)

//go:noescape
func ropePairsAVX512(x, c, s, y *float32, n int)

// rope512 reports whether the AVX-512 rotations may run.
func rope512() bool { return kernels.CurrentISA() >= kernels.AVX512 }

// ropeHalf rotates the pairs (x1[i], x2[i]) into (y1[i], y2[i]) with
// c[i], s[i] (all of len(x1)), eight at a time where AVX-512 runs.
func ropeHalf(x1, x2, c, s, y1, y2 []float32) {
	n := len(x1)
	v := 0
	if n >= 8 && rope512() {
		v = n &^ 7
		_, _, _, _, _ = x2[v-1], c[v-1], s[v-1], y1[v-1], y2[v-1]
		ropeHalfAVX512(&x1[0], &x2[0], &c[0], &s[0], &y1[0], &y2[0], v)
	}
	ropeHalfGo(x1[v:], x2[v:n], c[v:n], s[v:n], y1[v:n], y2[v:n])
}

// ropePairs rotates the len(c) pairs (x[2i], x[2i+1]) into y with c[i],
// s[i], eight at a time where AVX-512 runs.
func ropePairs(x, c, s, y []float32) {
	n := len(c)
	v := 0
	if n >= 8 && rope512() {
		v = n &^ 7
		_, _, _ = x[2*v-1], s[v-1], y[2*v-1]
		ropePairsAVX512(&x[0], &c[0], &s[0], &y[0], v)
	}
	ropePairsGo(x[2*v:2*n], c[v:], s[v:n], y[2*v:2*n])
}
