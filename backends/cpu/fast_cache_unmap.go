package cpu

import "github.com/weftrt/weft/internal/mmapfile"

// The packed-weight caches (fast_packcache.go, fast_conv_cache.go) key a
// packing by its source's address. A file mapping can be unmapped while a
// stale packing of its bytes is still alive, and a later mapping may reuse
// the address; so when a mapping goes, every entry whose source lies in it
// is dropped (kernels holding the packing keep it, nobody new finds it).
func init() { mmapfile.OnUnmap(dropPackedIn) }

// dropPackedIn removes the cache entries whose source overlaps [lo, hi).
func dropPackedIn(lo, hi uintptr) {
	overlaps := func(src uintptr, n, elem int) bool {
		return src < hi && src+uintptr(n*elem) > lo
	}
	packMu.Lock()
	for k := range packCache {
		if overlaps(k.src, k.n, 4) {
			delete(packCache, k)
		}
	}
	packMu.Unlock()
	convPackMu.Lock()
	for k := range convPackCache {
		if overlaps(k.src, k.n, 4) {
			delete(convPackCache, k)
		}
	}
	convPackMu.Unlock()
}
