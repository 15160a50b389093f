// Package membw measures streaming read bandwidth: the figure weft's
// decode benchmarks (weft bench on a language model, bench/gemm's GEMV
// benchmarks) compare their weight traffic with, measured in the same
// process so that both see the machine in the same state. It knows
// nothing of models or kernels.
//
// The probe is meant to be hard to beat: a plain Go loop reaches only part
// of what the memory system delivers to one core (on a Zen 5 guest about
// 30 of 40 GB/s), because the loads a core keeps in flight, not the DRAM,
// bound a streaming read. So Read takes the best of several readers: the
// plain loop, the widest vector loads the CPU has, and the vector loads
// with software prefetch at a few distances ahead (the technique weft's
// own decode kernels use). A kernel's share of Read is then its share of
// the best streaming read this process could do, not of a weak loop. Each
// reader's figure is its median pass (its best pass is kept too), so that
// a kernel's typical rate is compared with the probe's typical rate.
package membw

import (
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// Bytes is the probe's buffer size: far larger than the last-level cache,
// like the weights of a model that does not fit.
const Bytes = 256 << 20

// SumWords is a plain streaming read of x: eight independent sums, so the
// loop is bound by memory, not by an add chain.
func SumWords(x []uint64) uint64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 uint64
	for i := 0; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
		s4 += v[4]
		s5 += v[5]
		s6 += v[6]
		s7 += v[7]
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}

// chunkWords is the granule of the vector readers: 256 bytes.
const chunkWords = 32

// Reader is one way of streaming through memory.
type Reader struct {
	// Name says what the reader does, e.g. "go", "avx512",
	// "avx512+prefetch4096".
	Name string
	// Sum returns the sum of x's whole groups of eight words (SumWords's
	// result on the same slice; tested).
	Sum func(x []uint64) uint64
}

// Readers returns the readers this CPU can run: the plain Go loop first,
// then the vector loads (none without assembly for this architecture),
// without prefetch and with prefetch 1, 4 and 16 KiB ahead.
func Readers() []Reader {
	rs := []Reader{{Name: "go", Sum: SumWords}}
	if name := vectorName(); name != "" {
		for _, d := range []int{0, 1 << 10, 4 << 10, 16 << 10} {
			n := name
			if d > 0 {
				n = fmt.Sprintf("%s+prefetch%d", name, d)
			}
			rs = append(rs, Reader{Name: n, Sum: vectorSum(d)})
		}
	}
	return rs
}

// vectorSum returns a Sum that reads whole 256-byte chunks with the vector
// reader (prefetching d bytes ahead where d > 0) and the rest in Go.
func vectorSum(d int) func(x []uint64) uint64 {
	return func(x []uint64) uint64 {
		whole := len(x) / 8 * 8
		n := whole / chunkWords * chunkWords
		var s uint64
		if n > 0 {
			s = vectorRead(unsafe.Pointer(&x[0]), n*8, d)
		}
		return s + SumWords(x[n:whole])
	}
}

// Result is one reader's bandwidth: its median pass (GBs) and its best
// pass (BestGBs).
type Result struct {
	Reader  string
	GBs     float64
	BestGBs float64
}

var sink uint64

// passes is the number of timed passes per reader, after one warm-up.
const passes = 7

// Prober streams through a Bytes buffer of its own, one pass at a time,
// with a fixed number of goroutines, each summing its share: Measure's
// passes, and the passes a benchmark interleaves with its own work so that
// both are measured at the same moments (on a shared machine the memory
// system's state changes within seconds).
type Prober struct {
	buf     []uint64
	threads int
	chunk   int // words per goroutine: a whole number of vector granules
	sums    []uint64
}

// NewProber allocates and fills the buffer (touching every page, so that
// no pass pays for page faults) for passes with the given number of
// goroutines (at least one).
func NewProber(threads int) *Prober {
	threads = max(threads, 1)
	buf := make([]uint64, Bytes/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	return &Prober{buf: buf, threads: threads, chunk: len(buf) / threads / chunkWords * chunkWords, sums: make([]uint64, threads)}
}

// PassBytes is the number of bytes one pass reads.
func (p *Prober) PassBytes() int { return p.chunk * p.threads * 8 }

// Pass streams through the buffer once with r and returns the wall time,
// from the start of the first goroutine's share to the end of the last.
func (p *Prober) Pass(r Reader) time.Duration {
	t0 := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < p.threads; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			p.sums[w] += r.Sum(p.buf[w*p.chunk : (w+1)*p.chunk])
		}(w)
	}
	wg.Wait()
	d := time.Since(t0)
	sink += p.sums[0]
	return d
}

// GBs converts a pass's time to GB/s.
func (p *Prober) GBs(d time.Duration) float64 { return float64(p.PassBytes()) / d.Seconds() / 1e9 }

// Measure returns each reader's streaming read bandwidth in GB/s with the
// given number of goroutines, each summing its share of a Bytes buffer:
// the median of the timed passes after a warm-up, and the best. The
// readers take turns pass by pass, so that a burst of load elsewhere on
// the machine does not fall on one of them. Compare a kernel's typical
// rate (a mean or median over runs) with GBs and its best run with
// BestGBs: on a shared machine the best pass of a probe is a peak that
// typical runs of anything seldom see.
func Measure(threads int) []Result { return MeasureWith(NewProber(threads)) }

// MeasureWith is Measure on p's buffer. A benchmark that goes on to
// interleave p's passes with its own work then times them on a buffer
// already streamed through as often as Measure's timed passes were, and
// allocates no second one: a freshly allocated buffer's first passes can
// read slower (on a Zen 5 guest at one thread, 28.6, 30.1, 31.2 and 32.6
// GB/s, then 35–39, where Measure's median had been 35.2), which would
// flatter the work compared with them.
func MeasureWith(p *Prober) []Result {
	rs := Readers()
	times := make([][]time.Duration, len(rs))
	for _, r := range rs {
		p.Pass(r)
	}
	for range passes {
		for i, r := range rs {
			times[i] = append(times[i], p.Pass(r))
		}
	}
	out := make([]Result, len(rs))
	for i, r := range rs {
		slices.Sort(times[i])
		out[i] = Result{Reader: r.Name, GBs: p.GBs(times[i][passes/2]), BestGBs: p.GBs(times[i][0])}
	}
	return out
}

// ReaderNamed returns the reader of Readers with the given name.
func ReaderNamed(name string) (Reader, bool) {
	for _, r := range Readers() {
		if r.Name == name {
			return r, true
		}
	}
	return Reader{}, false
}

// Best returns the result with the highest median (the zero Result for
// none): the reader that streams fastest here.
func Best(results []Result) Result {
	var b Result
	for _, r := range results {
		if r.GBs > b.GBs {
			b = r
		}
	}
	return b
}

// Read returns the streaming read bandwidth in GB/s with the given number
// of goroutines: the best reader's median pass (see Measure).
func Read(threads int) float64 { return Best(Measure(threads)).GBs }
