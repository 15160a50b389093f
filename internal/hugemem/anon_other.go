//go:build !linux

package hugemem

import "github.com/weftrt/weft/ir"

// SlabSize is the bytes a slab of Slabs holds by default: where slabs
// are Go memory, all of it is allocated.
const SlabSize = 16 * PageSize

// mapAnon returns Go memory where there is no Linux mmap here.
func mapAnon(n int) ([]byte, error) { return ir.AlignedBytes(n), nil }

// unmapAnon leaves Go memory to the garbage collector.
func unmapAnon([]byte) {}

// releaseAnon does nothing to Go memory: the piece is zeroed instead, as
// Alloc promises zeroed pieces from a reused current slab.
func releaseAnon(b []byte) { clear(b) }
