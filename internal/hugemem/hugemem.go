// Package hugemem allocates long-lived buffers that a decode step reads in
// many short runs, the KV cache above all, so that they lie on transparent
// huge pages where the operating system offers them.
//
// A decode step reads each KV head's rows as a run of a few tens of KB and
// stores one row per head, a few hundred bytes each, far apart. After the
// weights have streamed through (tens to hundreds of MB a token), every
// 4 KiB page of those runs costs a TLB miss, and its page walk often
// misses the caches too. On a 110M Llama at 128–255 positions (per-op
// trace, alternating runs), 2 MiB pages took the 24 KVCacheUpdate ops of
// a token from 22–26 to 16–18 µs on one or two cores; KVAttention moved
// less than the run-to-run noise (274–294 against 277–286 µs on one
// core). In a kernel benchmark whose cache had been swept by 256 MB of
// other reads, the attention went from 35–50 to 31–34 µs.
//
// Bytes returns Go memory (the garbage collector frees it as usual): on
// Linux the 2 MiB-aligned part of a buffer of at least 2 MiB is advised
// MADV_HUGEPAGE before anything touches it, so that with transparent huge
// pages in "madvise" or "always" mode its pages fault in as huge pages.
// Elsewhere, or where the advice is refused, it is ordinary memory.
package hugemem

import (
	"unsafe"

	"github.com/weftrt/weft/ir"
)

// PageSize is the huge page size the allocation aligns to.
const PageSize = 2 << 20

// Bytes returns a zeroed byte slice of length n whose first byte is
// 64-byte aligned; from PageSize bytes on it starts on a PageSize boundary
// and is advised for huge pages (see the package comment).
func Bytes(n int) []byte {
	if n < PageSize {
		return ir.AlignedBytes(n)
	}
	buf := make([]byte, n+PageSize)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(buf))) & (PageSize - 1))
	b := buf[off : off+n : off+n]
	adviseHuge(b[:n&^(PageSize-1)])
	return b
}
