//go:build !noasm

package cpu

import (
	"unsafe"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// The AVX2 row kernels of KVAttention (fast_kv_amd64.s); n is a multiple
// of 8.

//go:noescape
func kvDotF32AVX2(a, b *float32, n int) float32

//go:noescape
func kvDotF16AVX2(a *float32, b *uint16, n int) float32

//go:noescape
func kvAxpyF32AVX2(y *float32, a float32, x *float32, n int)

//go:noescape
func kvAxpyF16AVX2(y *float32, a float32, x *uint16, n int)

//go:noescape
func kvStoreF16AVX2(dst *uint16, src *float32, n int)

// kvSIMD reports whether the AVX2 kernels may run (the kernels package's
// ISA level, which tests and --isa may lower).
func kvSIMD() bool { return kernels.CurrentISA() >= kernels.AVX2 }

// dotKV returns a·b (len(b) ≥ len(a)).
func dotKV(a, b []float32) float32 {
	n := len(a)
	v := n &^ 7
	var s float32
	if v > 0 && kvSIMD() {
		s = kvDotF32AVX2(unsafe.SliceData(a), unsafe.SliceData(b), v)
	} else {
		v = 0
	}
	return s + dotKVGo(a[v:], b[v:n])
}

// dotKVHalf returns a·b with b f16 bits (len(b) ≥ len(a)).
func dotKVHalf(a []float32, b []uint16) float32 {
	n := len(a)
	v := n &^ 7
	var s float32
	if v > 0 && kvSIMD() {
		s = kvDotF16AVX2(unsafe.SliceData(a), unsafe.SliceData(b), v)
	} else {
		v = 0
	}
	return s + dotKVHalfGo(a[v:], b[v:n])
}

// axpyKV is y += a·x (len(x) ≥ len(y)).
func axpyKV(y []float32, a float32, x []float32) {
	n := len(y)
	v := n &^ 7
	if v > 0 && kvSIMD() {
		kvAxpyF32AVX2(unsafe.SliceData(y), a, unsafe.SliceData(x), v)
	} else {
		v = 0
	}
	axpyKVGo(y[v:], a, x[v:n])
}

// axpyKVHalf is y += a·x with x f16 bits (len(x) ≥ len(y)).
func axpyKVHalf(y []float32, a float32, x []uint16) {
	n := len(y)
	v := n &^ 7
	if v > 0 && kvSIMD() {
		kvAxpyF16AVX2(unsafe.SliceData(y), a, unsafe.SliceData(x), v)
	} else {
		v = 0
	}
	axpyKVHalfGo(y[v:], a, x[v:n])
}

// storeHalf rounds src to f16 (to nearest even) into dst (len(dst) ≥
// len(src)). NaNs keep their payload's top bits (the hardware conversion).
func storeHalf(dst []uint16, src []float32) {
	n := len(src)
	v := n &^ 7
	if v > 0 && kvSIMD() {
		kvStoreF16AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), v)
	} else {
		v = 0
	}
	storeHalfGo(dst[v:n], src[v:])
}
