package hugemem

import (
	"math/bits"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SlabSize is the address space a slab of Slabs reserves by default:
// 1 GiB on 64-bit Linux, where untouched pages of an anonymous mapping
// take neither memory nor (MAP_NORESERVE) commit charge, so that a model's
// pieces lie back to back in one slab.
const SlabSize = 16 * PageSize << (5 * (bits.UintSize / 64)) // 32 MiB on 32-bit

// mapAnon maps n bytes (a multiple of PageSize) of anonymous memory on a
// PageSize boundary, advised for huge pages: it maps PageSize more and
// trims the ends. Its pages are not reserved (MAP_NORESERVE): they take
// memory as they are touched.
func mapAnon(n int) ([]byte, error) {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n+PageSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	head := int(-uintptr(p) & (PageSize - 1))
	base := unsafe.Add(p, head)
	if head > 0 {
		_ = unix.MunmapPtr(p, uintptr(head))
	}
	if tail := PageSize - head; tail > 0 {
		_ = unix.MunmapPtr(unsafe.Add(base, n), uintptr(tail))
	}
	b := unsafe.Slice((*byte)(base), n)
	adviseHuge(b)
	return b, nil
}

// unmapAnon unmaps memory from mapAnon.
func unmapAnon(b []byte) {
	_ = unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
}

// releaseAnon gives b's pages (whole pages of a mapAnon mapping) back to
// the operating system; they read as zeros when next touched.
func releaseAnon(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
