package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// The packed conv-weight cache, on the pattern of the packed-B cache
// (fast_packcache.go, whose comment gives the soundness argument): every
// compiled graph that convolves with the same constant weight tensor
// shares one kernels.ConvWeights, held weakly here and strongly by the
// kernels that use it.

// convPackKey identifies one packing of one constant M×K weight matrix.
type convPackKey struct {
	src  uintptr
	n    int
	m, k int
	isa  kernels.ISA
}

type convPackEntry struct {
	src    []float32
	packed weak.Pointer[kernels.ConvWeights]
}

var (
	convPackMu    sync.Mutex
	convPackCache = map[convPackKey]convPackEntry{}
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
	convPackMu.Lock()
	defer convPackMu.Unlock()
	if e, ok := convPackCache[key]; ok {
		if p := e.packed.Value(); p != nil {
			return p
		}
	}
	convPackCount.Add(1)
	p := kernels.PackConvWeights(w, K, M, K)
	wp := weak.Make(p)
	convPackCache[key] = convPackEntry{src: w, packed: wp}
	runtime.AddCleanup(p, func(k convPackKey) {
		convPackMu.Lock()
		defer convPackMu.Unlock()
		if e, ok := convPackCache[k]; ok && e.packed == wp {
			delete(convPackCache, k)
		}
	}, key)
	return p
}

// convPackTKey identifies one transposed packing (kernels.ConvWeightsT).
type convPackTKey struct {
	src  uintptr
	n    int
	m, k int
}

type convPackTEntry struct {
	src    []float32
	packed weak.Pointer[kernels.ConvWeightsT]
}

var convPackTCache = map[convPackTKey]convPackTEntry{}

// sharedConvWeightsT is sharedConvWeights for the transposed layout.
func sharedConvWeightsT(w []float32, M, K int) *kernels.ConvWeightsT {
	if len(w) == 0 {
		convPackCount.Add(1)
		return kernels.PackConvWeightsT(w, K, M, K)
	}
	key := convPackTKey{src: uintptr(unsafe.Pointer(&w[0])), n: len(w), m: M, k: K}
	convPackMu.Lock()
	defer convPackMu.Unlock()
	if e, ok := convPackTCache[key]; ok {
		if p := e.packed.Value(); p != nil {
			return p
		}
	}
	convPackCount.Add(1)
	p := kernels.PackConvWeightsT(w, K, M, K)
	wp := weak.Make(p)
	convPackTCache[key] = convPackTEntry{src: w, packed: wp}
	runtime.AddCleanup(p, func(k convPackTKey) {
		convPackMu.Lock()
		defer convPackMu.Unlock()
		if e, ok := convPackTCache[k]; ok && e.packed == wp {
			delete(convPackTCache, k)
		}
	}, key)
	return p
}
