package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/weftrt/weft/backends/cpu/kernels"
)

// The packed-weight cache: every compiled graph that multiplies by the same
// constant weight (the prefill and decode graphs of one language model are
// built from the same weight tensors, referenced, not copied) shares one
// packed copy instead of packing its own.
//
// An entry is keyed by the identity of the source (the address of its first
// element and its length) plus everything that shapes the packing (leading
// dimension, K, N, transposition, ISA level). The cache holds the packed
// panel weakly: kernels hold it strongly, and once no compiled graph uses it
// the garbage collector frees it and a cleanup drops the entry. While the
// entry exists it holds the source slice strongly, so the address in the key
// cannot be reused by another tensor while a stale entry could match it.
// Constant tensors are immutable once a graph is compiled (the compiler and
// runtime never write them), which is what makes identity a sound key.

// packKey identifies one packing of one constant matrix.
type packKey struct {
	src      uintptr
	n        int
	ld, k, w int
	trans    bool
	isa      kernels.ISA
}

// packEntry is a cached packing: the source held strongly (so its address
// stays unique while the entry lives), the packed panel weakly.
type packEntry struct {
	src    []float32
	packed weak.Pointer[kernels.PackedB]
}

var (
	packMu    sync.Mutex
	packCache = map[packKey]packEntry{}
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
	if e, ok := packCache[key]; ok {
		if p := e.packed.Value(); p != nil {
			recordPack(b, ld, trans, p)
			return p
		}
	}
	p := packB(b, ld, K, N, trans)
	recordPack(b, ld, trans, p)
	wp := weak.Make(p)
	packCache[key] = packEntry{src: b, packed: wp}
	runtime.AddCleanup(p, func(k packKey) {
		packMu.Lock()
		defer packMu.Unlock()
		if e, ok := packCache[k]; ok && e.packed == wp {
			delete(packCache, k)
		}
	}, key)
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
