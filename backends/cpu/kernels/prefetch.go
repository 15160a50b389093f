package kernels

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Prefetch is how a decode GEMV's software prefetch brings in its weights
// (QMatMulPacked, QRows.SetPrefetch). It changes no result, only which
// caches the weight lines pass through.
type Prefetch uint8

const (
	// PrefetchKeep prefetches into every cache level (PREFETCHT0): the
	// lines an L2 evicts go on to the L3, so weights that fit in the
	// last-level cache are served from it on the next token.
	PrefetchKeep Prefetch = iota
	// PrefetchStream prefetches non-temporally (PREFETCHNTA): the lines
	// come close to the core with a hint that they are read once, so a
	// weight stream larger than the cache, which no cache could keep
	// anyway, evicts less of what the step reuses (the KV cache, the
	// activations, the small constants). How far the hint keeps them out
	// of the L2 and L3 is the CPU's: on a Zen 5 guest the decode's
	// attention ran faster with it, but a part of the weights fetched
	// with PREFETCHT0 among streamed ones did not stay in the L3. The
	// packed Q4_0 decode kernel also prefetches streamed weights nearer
	// ahead than kept ones (4 against 16 KiB): from DRAM the nearer
	// distance moved more bytes a second, from the L3 the farther one.
	// It pays on AMD's cores only (StreamPrefetchHelps).
	PrefetchStream
)

// StreamPrefetchHelps reports whether PrefetchStream is the better hint
// on this CPU for a weight stream that no cache keeps: on AMD's cores
// (and Hygon's, which are AMD's), where it was measured faster (Zen 5,
// above), and not elsewhere. On an Intel Xeon guest with AVX-512 and AMX
// (2 vCPUs, 105 MB L3), PREFETCHNTA lost to PREFETCHT0 everywhere,
// measured turn about with the read probe (BenchmarkQ4ReadShare, cold
// packed Q4_0 rows): rows of 896 at 0.48 (16 KiB ahead) and 0.87 (4 KiB)
// of the probe against 0.95 and 0.91 with PREFETCHT0; rows of 4864 at
// 0.35 and 0.55–0.63 against 0.84–0.92. Qwen2-0.5B Q4_0 decode (266 MB
// of weights, streamed by the size rule) went from 68–75% of the read
// bandwidth to 85–91% (weft bench, three rounds alternating the hints,
// one and two threads). PREFETCHT1 did no better than PREFETCHT0 there.
func StreamPrefetchHelps() bool { return streamHelps }

var streamHelps = amdCPU()

// LastLevelCache returns the bytes of the outermost cache one core uses
// (its L3 where it has one, shared with its die's other cores) as CPUID
// reports it, else as Linux's sysfs does, or 0 where neither tells (as in
// many virtual machines).
func LastLevelCache() int64 {
	llcOnce.Do(func() {
		if llcBytes = lastLevelCache(); llcBytes == 0 {
			llcBytes = sysfsLastLevelCache("/sys/devices/system/cpu/cpu0/cache")
		}
	})
	return llcBytes
}

// sysfsLastLevelCache reads the size of the highest-level data or unified
// cache under dir (Linux's cpuN/cache: indexK/level, type, size as
// "32768K"), or 0.
func sysfsLastLevelCache(dir string) int64 {
	idx, _ := filepath.Glob(filepath.Join(dir, "index*"))
	var best, bestLevel int64
	for _, d := range idx {
		read := func(f string) string {
			b, _ := os.ReadFile(filepath.Join(d, f))
			return strings.TrimSpace(string(b))
		}
		if read("type") == "Instruction" {
			continue
		}
		level, err := strconv.ParseInt(read("level"), 10, 64)
		if err != nil {
			continue
		}
		s := read("size")
		mul := int64(1)
		switch {
		case strings.HasSuffix(s, "K"):
			mul, s = 1<<10, s[:len(s)-1]
		case strings.HasSuffix(s, "M"):
			mul, s = 1<<20, s[:len(s)-1]
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		if level > bestLevel || (level == bestLevel && n*mul > best) {
			best, bestLevel = n*mul, level
		}
	}
	return best
}

var (
	llcOnce  sync.Once
	llcBytes int64
)
