// Package membw measures streaming read bandwidth: the figure weft's
// decode benchmarks (weft bench on a language model, bench/gemm's GEMV
// benchmarks) compare their weight traffic with, measured in the same
// process so that both see the machine in the same state. It knows
// nothing of models or kernels.
package membw

import (
	"sync"
	"time"
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

var sink uint64

// Read returns the streaming read bandwidth in GB/s with the given number
// of goroutines, each summing its share of a Bytes buffer: the best of
// eight passes after a warm-up (on a busy machine the best pass is the one
// least disturbed).
func Read(threads int) float64 {
	threads = max(threads, 1)
	buf := make([]uint64, Bytes/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	chunk := len(buf) / threads
	sums := make([]uint64, threads)
	pass := func() time.Duration {
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := 0; w < threads; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				sums[w] += SumWords(buf[w*chunk : (w+1)*chunk])
			}(w)
		}
		wg.Wait()
		return time.Since(t0)
	}
	pass()
	best := time.Duration(1 << 62)
	for i := 0; i < 8; i++ {
		best = min(best, pass())
	}
	sink = sums[0]
	return float64(chunk*threads*8) / best.Seconds() / 1e9
}
