package hugemem

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapAnon maps n bytes (a multiple of PageSize) of anonymous memory on a
// PageSize boundary, advised for huge pages: it maps PageSize more and
// trims the ends.
func mapAnon(n int) ([]byte, error) {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n+PageSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
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
