//go:build !amd64 || noasm

package cpu

// Without the AVX2 kernels, KVAttention's tiles and KVCacheUpdate's f16
// stores run in plain Go.

func scoresKV(q, k []float32, d, n int, out []float32) { scoresKVGo(q, k, d, n, out) }
func accumKV(acc, w, v []float32, d, n int)            { accumKVGo(acc, w, v, d, n) }
func storeHalf(dst []uint16, src []float32)            { storeHalfGo(dst, src) }

func scoresKVHalfPF(q []float32, k []uint16, d, n int, out []float32, _, _ int) {
	scoresKVHalfGo(q, k, d, n, out)
}

func accumKVHalfPF(acc, w []float32, v []uint16, d, n, _, _ int) { accumKVHalfGo(acc, w, v, d, n) }
func loadQ8(dst []float32, src []byte)                           { loadQ8Go(dst, src) }

// prefetchRows does nothing without assembly.
func prefetchRows([]byte) {}

func prefetchRowsW([]byte) {}

// Without assembly KVAttention runs a head at a time (the grouped path
// has no plain-Go kernels: its gain is the widening it shares).
func kvGroupKernels(int) bool { return false }

func scoresKVHalfG(q []float32, ng int, k []uint16, d, n int, out []float32, ldo int) {
	scoresKVHalfGroupGo(q, ng, k, d, n, out, ldo)
}

func accumKVHalfG(acc []float32, lda, ng int, w []float32, ldw int, v []uint16, d, n int) {
	accumKVHalfGroupGo(acc, lda, ng, w, ldw, v, d, n)
}
