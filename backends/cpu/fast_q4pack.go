package cpu

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/internal/hugemem"
	"github.com/weftrt/weft/internal/mmapfile"
)

// Lane-packed Q4_0 weights (kernels.PackQ4Rows): where the CPU runs the
// packed kernels (AVX-512 VNNI), the QMatMul and QMatMulGroup kernels
// repack a constant Q4_0 weight once, when they are built, and read only
// the packed copy, which they hold. One packed copy serves every graph
// built from the same weight (a language model's prefill and decode
// graphs) through a weakCache like the SGEMM panels'.
//
// Memory: the copies live outside the Go heap, in huge-page slabs
// (hugemem.Slabs): in the Go heap, a heap goal of twice 70 MB of packed
// weights let compile-time garbage add 30 MB to the peak RSS of a 110M
// model; on 2 MiB pages the cold decode rows kernel read 15–20% faster
// (BenchmarkQRowsK, K = 2048 and 4096). A copy's piece is freed when the
// last kernel holding it is collected. When the source lies in a file mapping its pages are
// released after packing (mmapfile.Release): the copy replaces them in
// the resident set instead of doubling it. PackedWeightBytes counts the
// live copies.
//
// WEFT_Q4PACK=0 turns packing off (the kernels then read the GGUF layout
// where it lies).

// q4PackKey identifies one packing: the source's address and length and
// the matrix shape.
type q4PackKey struct {
	src  uintptr
	n    int
	N, K int
}

func (k q4PackKey) srcRange() (uintptr, uintptr) { return k.src, k.src + uintptr(k.n) }

// q4Packed is one packed weight. Whoever reads data holds the q4Packed:
// the memory is unmapped when it is collected.
type q4Packed struct{ data []byte }

var (
	q4PackMu    sync.Mutex
	q4PackCache = newWeakCache[q4PackKey, q4Packed](&q4PackMu)
	// q4PackCount counts the packings made (cache misses), for tests.
	q4PackCount atomic.Int64
	q4PackBytes atomic.Int64
	q4Slabs     hugemem.Slabs
)

// PackedWeightBytes returns the bytes of the repacked copies of weights
// that compiled kernels hold now (on top of the model file's pages they
// read in place).
func PackedWeightBytes() int64 { return q4PackBytes.Load() }

// q4PackOn reports whether Q4_0 weights are packed here and now.
func q4PackOn() bool {
	return kernels.Q4PackedSupported() && os.Getenv("WEFT_Q4PACK") != "0"
}

// sharedPackQ4 returns the N×K Q4_0 weight w packed, reusing a live
// packing of the same bytes, or nil when it cannot be packed.
func sharedPackQ4(w []byte, N, K int) *q4Packed {
	if len(w) == 0 {
		return nil
	}
	key := q4PackKey{src: uintptr(unsafe.Pointer(&w[0])), n: len(w), N: N, K: K}
	q4PackMu.Lock()
	defer q4PackMu.Unlock()
	if p := q4PackCache.get(key); p != nil {
		return p
	}
	piece, err := q4Slabs.Alloc(len(w))
	if err != nil {
		return nil
	}
	if err := kernels.PackQ4RowsTo(piece.B, w, N, K); err != nil {
		piece.Free()
		return nil
	}
	q4PackCount.Add(1)
	q4PackBytes.Add(int64(len(piece.B)))
	p := &q4Packed{data: piece.B}
	runtime.AddCleanup(p, func(piece *hugemem.Piece) {
		q4PackBytes.Add(-int64(len(piece.B)))
		piece.Free()
	}, piece)
	q4PackCache.put(key, w, p)
	mmapfile.Release(w)
	return p
}
