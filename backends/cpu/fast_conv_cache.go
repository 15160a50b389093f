package cpu

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// The packed conv-weight caches, on the pattern of the packed-B cache
// (weakCache in fast_weakcache.go gives the soundness argument): every
// compiled graph that convolves with the same constant weight tensor
// shares one kernels.ConvWeights (or ConvWeightsT), held weakly here and
// strongly by the kernels that use it.

// convPackKey identifies one packing of one constant M×K weight matrix.
type convPackKey struct {
	src  uintptr
	n    int
	m, k int
	isa  kernels.ISA
}

func (k convPackKey) srcRange() (uintptr, uintptr) { return k.src, k.src + uintptr(4*k.n) }

// convPackTKey identifies one transposed packing (kernels.ConvWeightsT).
type convPackTKey struct {
	src  uintptr
	n    int
	m, k int
}

func (k convPackTKey) srcRange() (uintptr, uintptr) { return k.src, k.src + uintptr(4*k.n) }

var (
	convPackMu     sync.Mutex
	convPackCache  = newWeakCache[convPackKey, kernels.ConvWeights](&convPackMu)
	convPackTCache = newWeakCache[convPackTKey, kernels.ConvWeightsT](&convPackMu)
	// convPackCount counts the packings made (cache misses), for tests.
	convPackCount atomic.Int64
)

// sharedConvWeights returns w (M×K row-major) packed for kernels.ConvGemm,
// reusing the packing of an identical earlier request that is still alive.
func sharedConvWeights(w []float32, M, K int) *kernels.ConvWeights {
	if len(w) == 0 {
		convPackCount.Add(1)
		return kernels.PackConvWeights(w, K, M, K)
	}
	key := convPackKey{src: uintptr(unsafe.Pointer(&w[0])), n: len(w), m: M, k: K, isa: kernels.CurrentISA()}
	return sharedConvPacking(convPackCache, key, w, func() *kernels.ConvWeights { return kernels.PackConvWeights(w, K, M, K) })
}

// sharedConvWeightsT is sharedConvWeights for the transposed layout.
func sharedConvWeightsT(w []float32, M, K int) *kernels.ConvWeightsT {
	if len(w) == 0 {
		convPackCount.Add(1)
		return kernels.PackConvWeightsT(w, K, M, K)
	}
	key := convPackTKey{src: uintptr(unsafe.Pointer(&w[0])), n: len(w), m: M, k: K}
	return sharedConvPacking(convPackTCache, key, w, func() *kernels.ConvWeightsT { return kernels.PackConvWeightsT(w, K, M, K) })
}

// sharedConvPacking returns the live packing of w under key in c, or
// packs one (counted in convPackCount) and caches it for as long as it
// lives.
func sharedConvPacking[K rangeKey, V any](c *weakCache[K, V], key K, w []float32, pack func() *V) *V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.get(key); p != nil {
		return p
	}
	convPackCount.Add(1)
	p := pack()
	c.put(key, w, p)
	return p
}
