//go:build amd64 && !noasm

package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weftrt/weft/internal/hugemem"
	"github.com/weftrt/weft/internal/membw"
	"github.com/weftrt/weft/ir"
)

// BenchmarkQ4ReadShare is the packed Q4_0 decode GEMV's streaming rate as
// a share of the read probe's, the two measured turn about, as weft bench
// compares a decode step with the probe: each round runs, for every mode
// in turn, one pass of QMatMulPacked (Q4_0) over 256 MB of cold packed weights
// (rows of K, one activation row, the threads' pool splitting them as in
// a decode step) and then one pass of the probe (membw's plain AVX-512
// reader, or its AVX2 one where the CPU has no AVX-512, over its own
// 256 MB, same threads). A mode's share is the median
// over rounds of its pass's rate against the faster of the probe passes
// either side of it. On a shared host whose memory system changes state
// from second to second, the shares of modes run in the same rounds
// compare much better than their rates across runs.
//
// The modes are the prefetch hint (t0: PrefetchKeep, PREFETCHT0; nta:
// PrefetchStream, PREFETCHNTA) and its distance in bytes.
func BenchmarkQ4ReadShare(b *testing.B) {
	if !PackedSupported(ir.Q4_0) {
		b.Skip("no packed Q4_0 kernels")
	}
	reader := shareReader(b)
	type mode struct {
		name  string
		pf    Prefetch
		ahead int
	}
	var modes []mode
	for _, a := range []int{4096, 16384} {
		modes = append(modes, mode{fmt.Sprintf("t0-%d", a), PrefetchKeep, a}, mode{fmt.Sprintf("nta%d", a), PrefetchStream, a})
	}
	var slabs hugemem.Slabs
	for _, threads := range []int{1, 2} {
		pool := NewPool(threads)
		probe := membw.NewProber(threads)
		for _, K := range []int{896, 4864} {
			piece, rows, rb, qa := coldQWeights(b, &slabs, ir.Q4_0, K, true)
			p := piece.B
			y := make([]float32, rows)
			pass := func(md mode) time.Duration {
				defer func(a, k int) { q4pStreamAhead, q4pKeepAhead = a, k }(q4pStreamAhead, q4pKeepAhead)
				q4pStreamAhead, q4pKeepAhead = md.ahead, md.ahead
				t0 := time.Now()
				if err := QMatMulPacked(pool, ir.Q4_0, p, rows, qa, y, rows, md.pf); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			names := make([]string, len(modes))
			for i, md := range modes {
				names[i] = md.name
			}
			b.Run(fmt.Sprintf("K%d/t=%d", K, threads), func(b *testing.B) {
				readShareRounds(b, probe, reader, rows*rb, names, func(i int) time.Duration { return pass(modes[i]) })
			})
			piece.Free()
		}
		pool.Close()
	}
}

// coldQWeights returns 256 MB of dt weight rows of K on huge pages
// (copies of 1024 random rows; with pack, in PackQ4Rows' layout), their
// number and bytes per row, and one quantized activation row of K.
func coldQWeights(b *testing.B, slabs *hugemem.Slabs, dt ir.DType, K int, pack bool) (piece *hugemem.Piece, rows, rb int, qa *QuantizedActs) {
	rb, err := qRowBytes(dt, K)
	if err != nil {
		b.Fatal(err)
	}
	rows = (256 << 20) / rb
	r := rand.New(rand.NewPCG(1, 2))
	qa = new(QuantizedActs)
	if err := QuantizeActs(qa, randFloats(r, K), K, 1, K); err != nil {
		b.Fatal(err)
	}
	w, _ := randQWeights(r, dt, 1024, K)
	if piece, err = slabs.Alloc(rows * rb); err != nil {
		b.Fatal(err)
	}
	p := piece.B
	for i := 0; i < rows; i += 1024 {
		n := min(1024, rows-i)
		if !pack {
			copy(p[i*rb:(i+n)*rb], w[:n*rb])
		} else if err := PackQ4RowsTo(p[i*rb:(i+n)*rb], w, n, K); err != nil {
			b.Fatal(err)
		}
	}
	return piece, rows, rb, qa
}

// shareReader returns the probe reader the read-share benchmarks compare
// with: membw's AVX-512 reader, else its AVX2 one (skipping b without
// either).
func shareReader(b *testing.B) membw.Reader {
	for _, name := range []string{"avx512", "avx2"} {
		if r, ok := membw.ReaderNamed(name); ok {
			return r
		}
	}
	b.Skip("no avx512 or avx2 reader")
	return membw.Reader{}
}

// readShareRounds runs the rounds of a read-share benchmark: each round
// runs pass(i) for every mode i in turn (names[i]), each pass followed by
// one pass of the probe with reader, and reports each mode's median rate
// (bytes a pass, in GB/s) and its median share of the faster of the probe
// passes either side of it, and the probe's median rate.
func readShareRounds(b *testing.B, probe *membw.Prober, reader membw.Reader, bytes int, names []string, pass func(i int) time.Duration) {
	pass(0)
	probe.Pass(reader)
	prev := probe.Pass(reader)
	shares := make([][]float64, len(names))
	rates := make([][]float64, len(names))
	var read []float64
	for b.Loop() {
		for i := range names {
			d := pass(i)
			next := probe.Pass(reader)
			gbs := float64(bytes) / d.Seconds() / 1e9
			shares[i] = append(shares[i], gbs/probe.GBs(min(prev, next)))
			rates[i] = append(rates[i], gbs)
			read = append(read, probe.GBs(next))
			prev = next
		}
	}
	med := func(x []float64) float64 { slices.Sort(x); return x[(len(x)-1)/2] }
	b.ReportMetric(med(read), "read-GB/s")
	for i, name := range names {
		b.ReportMetric(med(rates[i]), name+"-GB/s")
		b.ReportMetric(med(shares[i]), name+"-share")
	}
}
