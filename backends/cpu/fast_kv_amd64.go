//go:build !noasm

package cpu

import (
	"unsafe"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// The AVX2 kernels of KVAttention and KVCacheUpdate (fast_kv_amd64.s):
// scores and weighted sums over a tile of n cache rows of d elements (d a
// multiple of 8), and the f16 store.

//go:noescape
func kvScoresF32AVX2(q, k *float32, d, n int, out *float32)

//go:noescape
func kvScoresF16AVX2(q *float32, k *uint16, d, n int, out *float32)

//go:noescape
func kvAccumF32AVX2(acc, w, v *float32, d, n int)

//go:noescape
func kvAccumF16AVX2(acc, w *float32, v *uint16, d, n int)

//go:noescape
func kvScoresF16AVX512(q *float32, k *uint16, d, n int, out *float32, pf, pf2 int)

//go:noescape
func kvAccumF16AVX512(acc, w *float32, v *uint16, d, n, pf, pf2 int)

//go:noescape
func kvScoresF16G64(q *float32, ng int, k *uint16, n int, out *float32, ldo int)

//go:noescape
func kvAccumF16G64(acc *float32, lda int, ng int, w *float32, ldw int, v *uint16, n int)

//go:noescape
func kvScoresF16G128(q *float32, ng int, k *uint16, n int, out *float32, ldo int)

//go:noescape
func kvAccumF16G128(acc *float32, lda int, ng int, w *float32, ldw int, v *uint16, n int)

//go:noescape
func kvStoreF16AVX2(dst *uint16, src *float32, n int)

//go:noescape
func kvLoadQ8AVX2(dst *float32, src *byte, nblocks int)

//go:noescape
func kvPrefetch(p *byte, n int)

//go:noescape
func kvPrefetchW(p *byte, n int)

// prefetchRowsW asks for b's cache lines for writing, at once: the rows a
// decode step stores lie one per head, far apart and out of cache, and
// would otherwise be fetched one store miss at a time.
func prefetchRowsW(b []byte) {
	if len(b) > 0 {
		kvPrefetchW(&b[0], len(b))
	}
}

// prefetchRows asks for b's cache lines at once (a head's first rows: the
// cache is read once per step, after the weights have evicted it, and a
// stream's first rows would otherwise arrive one miss at a time).
func prefetchRows(b []byte) {
	if len(b) > 0 {
		kvPrefetch(&b[0], len(b))
	}
}

// kvSIMD reports whether the AVX2 kernels may run (the kernels package's
// ISA level, which tests and --isa may lower).
func kvSIMD() bool { return kernels.CurrentISA() >= kernels.AVX2 }

// scoresKV sets out[c] = q·k[c·d:(c+1)·d] for c < n.
func scoresKV(q, k []float32, d, n int, out []float32) {
	if n > 0 && d%8 == 0 && d > 0 && kvSIMD() {
		_, _, _ = q[d-1], k[n*d-1], out[n-1]
		kvScoresF32AVX2(unsafe.SliceData(q), unsafe.SliceData(k), d, n, unsafe.SliceData(out))
		return
	}
	scoresKVGo(q, k, d, n, out)
}

// kv512 reports whether the AVX-512 f16 kernels may run for head size d
// (a multiple of 32).
func kv512(d int) bool { return d > 0 && d%32 == 0 && kernels.CurrentISA() >= kernels.AVX512 }

// scoresKVHalfPF is scoresKV over f16 rows, prefetching each row's lines
// pfRows rows ahead (0: none past the rows it reads) and also next
// elements ahead (0: nothing more; the next head's same row) where the
// kernel takes distances (AVX-512).
func scoresKVHalfPF(q []float32, k []uint16, d, n int, out []float32, pfRows, next int) {
	if n > 0 && kv512(d) {
		_, _, _ = q[d-1], k[n*d-1], out[n-1]
		kvScoresF16AVX512(unsafe.SliceData(q), unsafe.SliceData(k), d, n, unsafe.SliceData(out), 2*d*pfRows, 2*next)
		return
	}
	if n > 0 && d%8 == 0 && d > 0 && kvSIMD() {
		_, _, _ = q[d-1], k[n*d-1], out[n-1]
		kvScoresF16AVX2(unsafe.SliceData(q), unsafe.SliceData(k), d, n, unsafe.SliceData(out))
		return
	}
	scoresKVHalfGo(q, k, d, n, out)
}

// kvGroupKernels reports whether the grouped-query kernels
// (fast_kv_group_amd64.s) may run for head size d: 64 or 128.
func kvGroupKernels(d int) bool { return (d == 64 || d == 128) && kv512(d) }

// scoresKVHalfG sets out[i·ldo+c] = q[i·d:(i+1)·d]·k[c·d:(c+1)·d] for
// i < ng, c < n (kvGroupKernels(d) only).
func scoresKVHalfG(q []float32, ng int, k []uint16, d, n int, out []float32, ldo int) {
	if n <= 0 || ng <= 0 {
		return
	}
	_, _, _ = q[ng*d-1], k[n*d-1], out[(ng-1)*ldo+n-1]
	if d == 128 {
		kvScoresF16G128(unsafe.SliceData(q), ng, unsafe.SliceData(k), n, unsafe.SliceData(out), ldo)
		return
	}
	kvScoresF16G64(unsafe.SliceData(q), ng, unsafe.SliceData(k), n, unsafe.SliceData(out), ldo)
}

// accumKVHalfG adds Σ_c w[i·ldw+c]·v[c·d:(c+1)·d] (c < n) to
// acc[i·lda:i·lda+d] for i < ng ≤ kvGroupMax(d) (kvGroupKernels(d) only).
func accumKVHalfG(acc []float32, lda, ng int, w []float32, ldw int, v []uint16, d, n int) {
	if n <= 0 || ng <= 0 {
		return
	}
	if ng > kvGroupMax(d) {
		panic("cpu: accumKVHalfG: more queries than registers")
	}
	_, _, _ = acc[(ng-1)*lda+d-1], w[(ng-1)*ldw+n-1], v[n*d-1]
	if d == 128 {
		kvAccumF16G128(unsafe.SliceData(acc), lda, ng, unsafe.SliceData(w), ldw, unsafe.SliceData(v), n)
		return
	}
	kvAccumF16G64(unsafe.SliceData(acc), lda, ng, unsafe.SliceData(w), ldw, unsafe.SliceData(v), n)
}

// accumKV adds Σ_c w[c]·v[c·d:(c+1)·d] (c < n) to acc[:d].
func accumKV(acc, w, v []float32, d, n int) {
	if n > 0 && d%8 == 0 && d > 0 && kvSIMD() {
		_, _, _ = acc[d-1], w[n-1], v[n*d-1]
		kvAccumF32AVX2(unsafe.SliceData(acc), unsafe.SliceData(w), unsafe.SliceData(v), d, n)
		return
	}
	accumKVGo(acc, w, v, d, n)
}

// accumKVHalfPF is accumKV over f16 rows with the prefetches of
// scoresKVHalfPF.
func accumKVHalfPF(acc, w []float32, v []uint16, d, n, pfRows, next int) {
	if n > 0 && kv512(d) {
		_, _, _ = acc[d-1], w[n-1], v[n*d-1]
		kvAccumF16AVX512(unsafe.SliceData(acc), unsafe.SliceData(w), unsafe.SliceData(v), d, n, 2*d*pfRows, 2*next)
		return
	}
	if n > 0 && d%8 == 0 && d > 0 && kvSIMD() {
		_, _, _ = acc[d-1], w[n-1], v[n*d-1]
		kvAccumF16AVX2(unsafe.SliceData(acc), unsafe.SliceData(w), unsafe.SliceData(v), d, n)
		return
	}
	accumKVHalfGo(acc, w, v, d, n)
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

// loadQ8 widens len(dst)/32 Q8_0 blocks at src into dst.
func loadQ8(dst []float32, src []byte) {
	nb := len(dst) / 32
	if nb > 0 && kvSIMD() {
		_, _ = dst[nb*32-1], src[nb*34-1]
		kvLoadQ8AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), nb)
		return
	}
	loadQ8Go(dst, src)
}
