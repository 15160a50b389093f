//go:build !noasm

package membw

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func readAVX512(p unsafe.Pointer, n, d int) uint64

//go:noescape
func readAVX2(p unsafe.Pointer, n, d int) uint64

func vectorName() string {
	switch {
	case cpu.X86.HasAVX512F:
		return "avx512"
	case cpu.X86.HasAVX2:
		return "avx2"
	}
	return ""
}

// vectorRead sums n bytes (a multiple of 256) at p as uint64 words with
// the widest vector loads, prefetching d bytes ahead where d > 0.
func vectorRead(p unsafe.Pointer, n, d int) uint64 {
	if cpu.X86.HasAVX512F {
		return readAVX512(p, n, d)
	}
	return readAVX2(p, n, d)
}
