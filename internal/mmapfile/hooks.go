package mmapfile

import (
	"sync"
	"unsafe"
)

// Unmap hooks. Caches elsewhere may key derived data (packed weight panels)
// by the address of a tensor's bytes. For Go memory that is sound while the
// cache holds the source slice, since the address cannot be reused; a
// mapping, though, is released by munmap whatever Go holds, and the next
// mapping may land at the same address with other contents. OnUnmap lets
// such a cache drop its entries for a range before the range goes away.

var (
	hooksMu sync.Mutex
	hooks   []func(lo, hi uintptr)
)

// OnUnmap registers f to be called with the address range [lo, hi) of
// every mapping just before it is unmapped. f runs synchronously, must be
// quick, and must not call into this package.
func OnUnmap(f func(lo, hi uintptr)) {
	hooksMu.Lock()
	defer hooksMu.Unlock()
	hooks = append(hooks, f)
}

// notifyUnmap calls the registered hooks for data's range.
func notifyUnmap(data []byte) {
	if len(data) == 0 {
		return
	}
	lo := uintptr(unsafe.Pointer(&data[0]))
	hi := lo + uintptr(len(data))
	hooksMu.Lock()
	hs := hooks
	hooksMu.Unlock()
	for _, f := range hs {
		f(lo, hi)
	}
}

// The live mappings made by Map, for Release.
var (
	mapsMu sync.Mutex
	maps   = map[uintptr]uintptr{} // start → end
)

func addMapping(data []byte) {
	if len(data) == 0 {
		return
	}
	lo := uintptr(unsafe.Pointer(&data[0]))
	mapsMu.Lock()
	maps[lo] = lo + uintptr(len(data))
	mapsMu.Unlock()
}

func removeMapping(data []byte) {
	if len(data) == 0 {
		return
	}
	mapsMu.Lock()
	delete(maps, uintptr(unsafe.Pointer(&data[0])))
	mapsMu.Unlock()
}

// mapped reports whether [lo, hi) lies inside one live mapping.
func mapped(lo, hi uintptr) bool {
	mapsMu.Lock()
	defer mapsMu.Unlock()
	for a, b := range maps {
		if a <= lo && hi <= b {
			return true
		}
	}
	return false
}

// Mapped reports whether b lies inside one live mapping made by Map (its
// bytes are file pages, which Release may drop).
func Mapped(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(&b[0]))
	return mapped(lo, lo+uintptr(len(b)))
}
