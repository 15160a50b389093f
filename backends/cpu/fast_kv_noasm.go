//go:build !amd64 || noasm

package cpu

// Without the AVX2 kernels, KVAttention's rows run in plain Go.

func dotKV(a, b []float32) float32                  { return dotKVGo(a, b) }
func dotKVHalf(a []float32, b []uint16) float32     { return dotKVHalfGo(a, b) }
func axpyKV(y []float32, a float32, x []float32)    { axpyKVGo(y, a, x) }
func axpyKVHalf(y []float32, a float32, x []uint16) { axpyKVHalfGo(y, a, x) }
func storeHalf(dst []uint16, src []float32)         { storeHalfGo(dst, src) }
