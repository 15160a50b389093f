//go:build !noasm

package membw

import "unsafe"

//go:noescape
func readNEON(p unsafe.Pointer, n, d int) uint64

func vectorName() string { return "neon" }

// vectorRead sums n bytes (a multiple of 256) at p as uint64 words with
// 128-bit loads, prefetching d bytes ahead where d > 0.
func vectorRead(p unsafe.Pointer, n, d int) uint64 { return readNEON(p, n, d) }
