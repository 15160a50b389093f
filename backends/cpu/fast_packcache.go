package cpu

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// The packed-weight cache for SGEMM B panels: every compiled graph that
// multiplies by the same constant weight (the prefill and decode graphs of
// one language model are built from the same weight tensors, referenced,
// not copied) shares one packed copy instead of packing its own. See
// weakCache (fast_weakcache.go) for why identity is a sound key.

// packKey identifies one packing of one constant matrix: its source plus
// everything that shapes the packing (leading dimension, K, N,
// transposition, ISA level).
type packKey struct {
	src      uintptr
	n        int
	ld, k, w int
	trans    bool
	isa      kernels.ISA
}

func (k packKey) srcRange() (uintptr, uintptr) { return k.src, k.src + uintptr(4*k.n) }

var (
	packMu    sync.Mutex
	packCache = newWeakCache[packKey, kernels.PackedB](&packMu)
	// packCount counts the packings made (cache misses), for tests.
	packCount atomic.Int64
)

// sharedPackB returns b (K×N with leading dimension ld, or N×K when trans
// is set) packed for SGEMM, reusing the packing of an identical earlier
// request whose result is still alive.
func sharedPackB(b []float32, ld, K, N int, trans bool) *kernels.PackedB {
	if len(b) == 0 {
		return packB(b, ld, K, N, trans)
	}
	key := packKey{src: uintptr(unsafe.Pointer(&b[0])), n: len(b), ld: ld, k: K, w: N, trans: trans, isa: kernels.CurrentISA()}
	packMu.Lock()
	defer packMu.Unlock()
	// Panels stored in an opened plan file (prepack.go), when they fit.
	// They are not cached: they live in a file mapping, and an entry could
	// outlive it.
	if p := fromOffer(b, ld, K, N, trans); p != nil {
		recordPack(b, ld, trans, p)
		return p
	}
	if p := packCache.get(key); p != nil {
		recordPack(b, ld, trans, p)
		return p
	}
	p := packB(b, ld, K, N, trans)
	recordPack(b, ld, trans, p)
	packCache.put(key, b, p)
	return p
}

// packB packs without the cache.
func packB(b []float32, ld, K, N int, trans bool) *kernels.PackedB {
	packCount.Add(1)
	if trans {
		return kernels.PackBT(b, ld, K, N)
	}
	return kernels.PackB(b, ld, K, N)
}
