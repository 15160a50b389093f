package main

import (
	"sync"
	"time"
)

// bwBytes is the size of the read-bandwidth probe's buffer: far larger
// than the last-level cache, like the weights of a model that does not fit.
const bwBytes = 256 << 20

// streamBandwidth measures the streaming read bandwidth in GB/s with the
// given number of goroutines, each summing its share of a bwBytes buffer
// (eight independent sums, so that the loop is bound by memory): the best
// of eight passes after a warm-up (on a busy machine the best pass is the
// one least disturbed). It is bench/gemm's
// BenchmarkReadBandwidth, run in the same process as a language-model
// benchmark so that decode's weight traffic can be compared with what the
// machine delivered at that moment.
func streamBandwidth(threads int) float64 {
	threads = max(threads, 1)
	buf := make([]uint64, bwBytes/8)
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
				sums[w] += sumWords(buf[w*chunk : (w+1)*chunk])
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
	bwSink = sums[0]
	return float64(chunk*threads*8) / best.Seconds() / 1e9
}

var bwSink uint64

// sumWords sums x with eight independent accumulators.
func sumWords(x []uint64) uint64 {
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
