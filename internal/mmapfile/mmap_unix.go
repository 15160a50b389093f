//go:build unix

package mmapfile

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Map maps f read-only and returns its bytes and a function that unmaps
// them. Nothing is read here: pages come in as they are touched. A
// zero-length file maps to an empty slice.
func Map(f *os.File) ([]byte, func() error, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size == 0 {
		return []byte{}, func() error { return nil }, nil
	}
	if int64(int(size)) != size {
		return nil, nil, os.ErrInvalid
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		// Some filesystems cannot be mapped; read the file instead.
		return read(f)
	}
	addMapping(data)
	return data, func() error {
		notifyUnmap(data)
		removeMapping(data)
		return unix.Munmap(data)
	}, nil
}

// Release tells the kernel that the pages wholly inside b, a part of a
// mapping made by Map, are not needed for now: they leave the process's
// resident set (the page cache keeps them) and come back from the file if
// touched again, so the bytes read the same. It reports whether it did;
// for anything but a live mapping of Map (Go memory, a file read into
// memory) it does nothing, since there dropping pages would lose them.
func Release(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(&b[0]))
	hi := lo + uintptr(len(b))
	if !mapped(lo, hi) {
		return false
	}
	ps := uintptr(os.Getpagesize())
	a, e := (lo+ps-1)&^(ps-1), hi&^(ps-1)
	if a >= e {
		return false
	}
	// The page-aligned interior of b, as a subslice of b.
	return unix.Madvise(b[a-lo:e-lo], unix.MADV_DONTNEED) == nil
}

// Prefault asks the kernel to map the pages of b, a part of a mapping
// made by Map, in one call (MADV_POPULATE_READ, Linux 5.14 on) before a
// caller reads all of it: page by page, the faults of a 270 MB weight copy
// cost more than the copy. Elsewhere, or where refused, it does nothing.
func Prefault(b []byte) {
	if len(b) == 0 || !Mapped(b) {
		return
	}
	lo := uintptr(unsafe.Pointer(&b[0]))
	ps := uintptr(os.Getpagesize())
	a := lo &^ (ps - 1)
	// The whole pages around b, as a slice of the mapping.
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&b[0]), -int(lo-a))), len(b)+int(lo-a)), madvPopulateRead)
}
