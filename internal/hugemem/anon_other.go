//go:build !linux

package hugemem

import "github.com/weftrt/weft/ir"

// mapAnon returns Go memory where there is no Linux mmap here.
func mapAnon(n int) ([]byte, error) { return ir.AlignedBytes(n), nil }

// unmapAnon leaves Go memory to the garbage collector.
func unmapAnon([]byte) {}
