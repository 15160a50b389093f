package cpu

import (
	"runtime"
	"sync"
	"weak"

	"github.com/weftrt/weft/internal/mmapfile"
)

// weakCache is the shape every packed-weight cache of this package has
// (fast_packcache.go for SGEMM panels, fast_conv_cache.go for conv
// weights): a packing keyed by the identity of its constant source (the
// address of the first element and the length) plus whatever shapes the
// packing, held weakly — the kernels that use it hold it strongly, and
// once none does the garbage collector frees it and a cleanup drops the
// entry. While an entry lives it holds its source strongly, so for Go
// memory the address in the key cannot be reused by another tensor. A
// file mapping is released by munmap whatever Go holds, so entries whose
// source lies in a mapping leave when it is unmapped (mmapfile.OnUnmap):
// a later mapping at the same address never finds a stale packing.
// Constant tensors are immutable once a graph is compiled, which is what
// makes identity a sound key.
type weakCache[K rangeKey, V any] struct {
	mu *sync.Mutex // guards m; shared by caches that must change together
	m  map[K]weakEntry[V]
}

// rangeKey is a cache key that knows the bytes of its source.
type rangeKey interface {
	comparable
	srcRange() (lo, hi uintptr)
}

type weakEntry[V any] struct {
	src    any // the source slice, held so its address stays unique
	packed weak.Pointer[V]
}

// rangeDropper is what the unmap hook needs of a cache.
type rangeDropper interface{ dropRange(lo, hi uintptr) }

var (
	cachesMu  sync.Mutex
	allCaches []rangeDropper
)

func init() {
	mmapfile.OnUnmap(func(lo, hi uintptr) {
		cachesMu.Lock()
		cs := allCaches
		cachesMu.Unlock()
		for _, c := range cs {
			c.dropRange(lo, hi)
		}
	})
}

// newWeakCache makes a cache guarded by mu and registers it for unmaps.
func newWeakCache[K rangeKey, V any](mu *sync.Mutex) *weakCache[K, V] {
	c := &weakCache[K, V]{mu: mu, m: map[K]weakEntry[V]{}}
	cachesMu.Lock()
	allCaches = append(allCaches, c)
	cachesMu.Unlock()
	return c
}

// get returns the live packing for k, or nil. The caller holds c.mu.
func (c *weakCache[K, V]) get(k K) *V {
	if e, ok := c.m[k]; ok {
		return e.packed.Value()
	}
	return nil
}

// put records p as the packing of src under k. The caller holds c.mu.
func (c *weakCache[K, V]) put(k K, src any, p *V) {
	wp := weak.Make(p)
	c.m[k] = weakEntry[V]{src: src, packed: wp}
	runtime.AddCleanup(p, func(k K) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if e, ok := c.m[k]; ok && e.packed == wp {
			delete(c.m, k)
		}
	}, k)
}

// dropRange removes the entries whose source overlaps [lo, hi).
func (c *weakCache[K, V]) dropRange(lo, hi uintptr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if a, b := k.srcRange(); a < hi && b > lo {
			delete(c.m, k)
		}
	}
}

// countAt is the number of entries whose source starts at lo (for tests).
func (c *weakCache[K, V]) countAt(lo uintptr) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k := range c.m {
		if a, _ := k.srcRange(); a == lo {
			n++
		}
	}
	return n
}
