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
	"github.com/weftrt/weft/ir"
)

// Weight copies: the kernels that stream a constant weight once per
// token (QMatMul, QMatMulGroup, the F16/BF16 QMatMul) read it from a copy
// of their own on huge pages instead of the model file's 4 KiB pages,
// made once when the kernel is built:
//
//   - Q4_0 weights, where the CPU runs the packed kernels (AVX-512 VNNI,
//     or AVX2), are repacked (kernels.PackQ4Rows: one block per 32-bit
//     lane), from a file mapping or from Go memory: the packed kernels do
//     fewer than half the vector instructions, which took prefill of a
//     110M Llama from 780–1000 to 1090–1290 tok/s on one core (AVX-512,
//     Zen 5), and from 370–400 to 810–850 tok/s on two (AVX2, Zen 3).
//     Q8_0 weights likewise where the CPU has AVX-512 VNNI
//     (kernels.PackQ8RowsTo): a 2048×768 GEMV at 128 activation rows
//     went from 28.5 to 48.8 GMAC/s on one core and at one row from 10.3
//     to 20.4 (Intel Xeon guest).
//   - Other weights are copied as they are, only from a file mapping and
//     where transparent huge pages are available (hugemem.Available):
//     the copy then replaces the file pages, which are released
//     (mmapfile.Release), so the resident set does not grow.
//
// On 2 MiB pages a cold decode GEMV reads 15–20% faster (BenchmarkQRowsK
// at K = 2048 and 4096), and decode of Q4_0 models went from 70–85% of the
// read bandwidth to 86–100% (weft bench, alternating runs, one thread, in
// the state of this host where its cores' memory is far; in the near
// state the two measured alike): the TLB and
// page walks of 4 KiB pages, which the weight stream crosses every 4 KiB,
// were what held one core's stream below the read probe's. The copies
// live outside the Go heap (hugemem.Slabs): in it, a heap goal of twice 70
// MB of weights let compile-time garbage add 30 MB to the peak RSS.
//
// One copy serves every graph built from the same weight (a language
// model's prefill and decode graphs) through a weakCache like the SGEMM
// panels'; a kernel holds its copies, which are freed when the last
// holder is collected. WeightCopyBytes counts the live copies.
//
// WEFT_WEIGHT_COPY=0 turns copies off (kernels read weights where they
// lie, in the GGUF layout); WEFT_Q4PACK=0 keeps Q4_0, WEFT_Q8PACK=0 Q8_0
// in the GGUF layout (copied like other weights).

// weightKey identifies one copy: the source's address and length, the
// matrix shape and the type it is repacked as (ir.Invalid: copied as it
// is).
type weightKey struct {
	src  uintptr
	n    int
	N, K int
	pack ir.DType
}

func (k weightKey) srcRange() (uintptr, uintptr) { return k.src, k.src + uintptr(k.n) }

// weightCopy is one copy of a weight. Whoever reads data holds the
// weightCopy: its memory is freed when it is collected.
type weightCopy struct {
	data []byte
	// packed: data is of this type (Q4_0 or Q8_0) in the lane-packed
	// layout (kernels.PackRowsTo); ir.Invalid: as the source.
	packed ir.DType
	// pf is how the decode kernels prefetch data (a kernels.Prefetch),
	// set by the executors whose steps stream it (streamPrefetch).
	pf atomic.Uint32
}

// streamPrefetch is how the decode kernels of a plan that streams bytes
// of weights a run, on workers that sit on different dies where far,
// prefetch them: on a CPU where the hint pays
// (kernels.StreamPrefetchHelps), PrefetchStream where more bytes pass
// through each last-level cache than it holds (kernels.LastLevelCache,
// or maxDieCache where its size is unknown; workers on different dies,
// kernels.Pool.Far, split the weights between their caches), else
// PrefetchKeep. A weight stream that fits stays in the cache for the next
// token (at two threads on this host's two dies, the halves of a 62 MB
// Llama-110M Q4_0 in two 32 MB L3s); one that does not would only evict
// the KV cache and the activations, which non-temporal prefetches
// disturb less. Measured on a Zen 5 guest (which reports no cache per
// die, so maxDieCache applies), alternating runs against PREFETCHT0 (on
// an Intel Xeon guest the hint lost everywhere: kernels.StreamPrefetchHelps):
//
//   - Qwen2-0.5B Q4_0 (266 MB, streamed), one thread, per-op trace of 64
//     decode steps: the GEMVs 9.8–10.2 ms a token → 8.2–9.7, faster in 9
//     of 9 rounds, attention 250–270 → 225–250 µs; in a state of the host
//     where the GEMVs ran at 23 GB/s, 2–3% faster (11 of 14 rounds).
//     weft bench: 97–122 → 123–129 tok/s (3 rounds); at two threads the
//     share of the read bandwidth 0.86–0.92 → 0.95–1.00 (3 rounds).
//   - Llama-110M Q4_0 (62 MB, kept here) at one thread, if streamed: its
//     attention a median of 312 → 264 µs (7 of 8 rounds), the GEMVs
//     alike; at two threads across dies, streamed, the GEMVs slower in 7
//     of 8 rounds (1.30–1.58 → 1.34–1.94 ms), as its halves no longer stay
//     in the two L3s.
func streamPrefetch(bytes int64, workers int, far bool) kernels.Prefetch {
	dies := 1
	if far {
		dies = workers
	}
	return prefetchFor(bytes, kernels.LastLevelCache(), dies, kernels.StreamPrefetchHelps())
}

// prefetchFor is streamPrefetch's rule: bytes streamed by workers on dies
// dies, each with a last-level cache of llc bytes (0: unknown), on a CPU
// where PrefetchStream pays for a stream the cache does not hold
// (streamOK: kernels.StreamPrefetchHelps; without it, PrefetchKeep).
func prefetchFor(bytes, llc int64, dies int, streamOK bool) kernels.Prefetch {
	if llc <= 0 {
		llc = maxDieCache
	}
	if streamOK && bytes/int64(max(1, dies)) > llc {
		return kernels.PrefetchStream
	}
	return kernels.PrefetchKeep
}

// maxDieCache is the last-level cache streamPrefetch assumes where the
// CPU does not report its own: as much as any one die has today (96 MB
// on AMD's stacked-cache parts), so that only weights no cache could hold
// are streamed.
const maxDieCache = 96 << 20

// prefetch returns how the decode kernels prefetch c's data.
func (c *weightCopy) prefetch() kernels.Prefetch { return kernels.Prefetch(c.pf.Load()) }

var (
	weightMu    sync.Mutex
	weightCache = newWeakCache[weightKey, weightCopy](&weightMu)
	// weightCopies counts the copies made (cache misses), for tests.
	weightCopies atomic.Int64
	weightBytes  atomic.Int64
	weightSlabs  hugemem.Slabs
	hugeOK       = hugemem.Available()
)

// WeightCopyBytes returns the bytes of the copies of weights that
// compiled kernels hold now (on top of the model file's pages they read
// in place).
func WeightCopyBytes() int64 { return weightBytes.Load() }

// packOn reports whether weights of dt are repacked here and now (Q4_0
// and Q8_0 where their packed kernels run).
func packOn(dt ir.DType) bool {
	var env string
	switch dt {
	case ir.Q4_0:
		env = "WEFT_Q4PACK"
	case ir.Q8_0:
		env = "WEFT_Q8PACK"
	default:
		return false
	}
	return kernels.PackedSupported(dt) && os.Getenv(env) != "0" && os.Getenv("WEFT_WEIGHT_COPY") != "0"
}

// sharedPack returns the N×K weight w of dt repacked, reusing a live
// packing of the same bytes, or nil when it cannot be packed.
func sharedPack(dt ir.DType, w []byte, N, K int) *weightCopy {
	return sharedWeight(w, weightKey{N: N, K: K, pack: dt})
}

// residentWeight returns the weight w (N×K of any type) copied to huge
// pages where that applies (see above), or nil where the kernel should
// read w in place.
func residentWeight(w []byte, N, K int) *weightCopy {
	if !hugeOK || os.Getenv("WEFT_WEIGHT_COPY") == "0" || !mmapfile.Mapped(w) {
		return nil
	}
	return sharedWeight(w, weightKey{N: N, K: K})
}

// sharedWeight returns the copy key describes of w, reusing a live one.
func sharedWeight(w []byte, key weightKey) *weightCopy {
	if len(w) == 0 {
		return nil
	}
	key.src, key.n = uintptr(unsafe.Pointer(&w[0])), len(w)
	weightMu.Lock()
	defer weightMu.Unlock()
	if c := weightCache.get(key); c != nil {
		return c
	}
	piece, err := weightSlabs.Alloc(len(w))
	if err != nil {
		return nil
	}
	// In runs of rows of about 4 MiB: each run's file pages are mapped in
	// one call, copied, then released, so that the resident set never
	// holds a whole large weight twice (a 49 MB F16 output matrix did).
	rb := len(w) / max(key.N, 1)
	step := max(1, (4<<20)/max(rb, 1))
	for n0 := 0; n0 < key.N; n0 += step {
		n1 := min(key.N, n0+step)
		src, dst := w[n0*rb:n1*rb], piece.B[n0*rb:n1*rb]
		mmapfile.Prefault(src)
		if key.pack != ir.Invalid {
			err = kernels.PackRowsTo(key.pack, dst, src, n1-n0, key.K)
		} else {
			copy(dst, src)
		}
		if err != nil {
			piece.Free()
			return nil
		}
		mmapfile.Release(src)
	}
	copy(piece.B[key.N*rb:], w[key.N*rb:])
	weightCopies.Add(1)
	weightBytes.Add(int64(len(piece.B)))
	c := &weightCopy{data: piece.B, packed: key.pack}
	runtime.AddCleanup(c, func(piece *hugemem.Piece) {
		weightBytes.Add(-int64(len(piece.B)))
		piece.Free()
	}, piece)
	weightCache.put(key, w, c)
	mmapfile.Release(w) // the pages the runs' edges shared
	return c
}

// liveCopy returns a live copy of the N×K weight w, as it is or packed,
// that a kernel made and holds, or nil: for a kernel that reads
// only some rows of w (the token embedding of a model whose classifier
// shares it) and should read them from the copy rather than fault the
// file's pages back in.
func liveCopy(w []byte, N, K int) *weightCopy {
	if len(w) == 0 {
		return nil
	}
	key := weightKey{src: uintptr(unsafe.Pointer(&w[0])), n: len(w), N: N, K: K}
	weightMu.Lock()
	defer weightMu.Unlock()
	for _, key.pack = range []ir.DType{ir.Invalid, ir.Q4_0, ir.Q8_0} {
		if c := weightCache.get(key); c != nil {
			return c
		}
	}
	return nil
}
