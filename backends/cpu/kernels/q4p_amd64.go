//go:build amd64 && !noasm

package kernels

//go:noescape
func dotQ4P512rows(nr int, nb int, w *byte, rb int, lay *byte, y *float32, pf int)

//go:noescape
func dotQ4P512x4rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

//go:noescape
func dotQ4P512x8rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int)

//go:noescape
func dotQ4PAVX2rows(nr int, nb int, w *byte, rb int, lay *byte, y *float32, pf int, masks *uint32)

//go:noescape
func dotQ4PAVX2x4rows(nr int, nb int, w *byte, rb int, lay *byte, ld int, y *float32, ldy int, masks *uint32)

//go:noescape
func q4pActsAVX512(qs *int8, d *float32, nsum *int32, nb int, out *byte, idx *int32)

// q4pGatherIdx is q4pActsAVX512's gather indices: block i's codes start
// at dword 8i.
var q4pGatherIdx = [16]int32{0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120}

// q4pStreamAhead and q4pKeepAhead are how far ahead of its loads, in
// bytes, the decode kernel prefetches the weights it streams
// (PrefetchStream, PREFETCHNTA) and those it keeps (PrefetchKeep,
// PREFETCHT0). Measured on a Zen 5 guest (BenchmarkQ4ReadShare, whose
// modes run turn about with the read probe): on 256 MB of cold weights,
// 4 KiB ahead against 16 KiB raised the streamed GEMV's share of the read
// bandwidth in 14 of 16 comparisons (rows of 896 and 4864, one and two
// threads; medians 0.99 against 0.93), and PREFETCHT0 4 KiB ahead did
// better than 16 KiB on cold weights too; but on 20–40 MB that stay in
// the L3 from one pass to the next, as the weights the CPU backend keeps
// do, 16 KiB was as fast or faster (one thread, 20 MB: 38.4, 30.4 and
// 43.2 GB/s against 33.3, 30.8 and 38.2).
var q4pStreamAhead, q4pKeepAhead = 4096, 16384

func init() {
	if BestISA() >= AVX512 {
		q4pActsRow = func(qs []int8, d []float32, nsum []int32, out []byte) {
			nb := len(d)
			if nb == 0 {
				return
			}
			// The gathers read whole blocks of qs; the records fill out.
			_, _, _ = qs[nb*qBlock-1], nsum[nb-1], out[(nb+q4pGroup-1)/q4pGroup*q4pRec-1]
			q4pActsAVX512(&qs[0], &d[0], &nsum[0], nb, &out[0], &q4pGatherIdx[0])
		}
	}
	if BestISA() >= AVX2 {
		q4pKernels[AVX2] = q4pSet{
			// PREFETCHT0 whatever pf says, as the GGUF layout's AVX2
			// kernel: on a Zen 3 guest (AVX2, 32 MiB L3), PREFETCHNTA made
			// the decode of a 110M Q4_0 model 4–5% slower at two threads
			// than the GGUF kernel, and PREFETCHT0 1.5% faster (two
			// instances alternating, 32 stretches of 16 steps each).
			x1: func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int, _ Prefetch) {
				if q4pCheck(1, nr, nb, 18, w, rb, lay, ld, y, ldy) {
					dotQ4PAVX2rows(nr, nb, &w[0], rb, &lay[0], &y[0], -q4pKeepAhead, &q4pAVX2Masks[nb%q4pGroup][0])
				}
			},
			x4: func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int, _ Prefetch) {
				if q4pCheck(4, nr, nb, 18, w, rb, lay, ld, y, ldy) {
					dotQ4PAVX2x4rows(nr, nb, &w[0], rb, &lay[0], ld, &y[0], ldy, &q4pAVX2Masks[nb%q4pGroup][0])
				}
			},
		}
	}
	if BestISA() < AVX512 || !hasVNNI {
		return
	}
	q4pKernels[AVX512] = q4pSet{
		x1: func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int, pf Prefetch) {
			if q4pCheck(1, nr, nb, 18, w, rb, lay, ld, y, ldy) {
				dotQ4P512rows(nr, nb, &w[0], rb, &lay[0], &y[0], q4pDist(pf))
			}
		},
		x4: func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int, _ Prefetch) {
			if q4pCheck(4, nr, nb, 18, w, rb, lay, ld, y, ldy) {
				dotQ4P512x4rows(nr, nb, &w[0], rb, &lay[0], ld, &y[0], ldy)
			}
		},
		x8: func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int, _ Prefetch) {
			if q4pCheck(8, nr, nb, 18, w, rb, lay, ld, y, ldy) {
				dotQ4P512x8rows(nr, nb, &w[0], rb, &lay[0], ld, &y[0], ldy)
			}
		},
	}
}

// q4pDist is the decode kernels' prefetch argument for pf: the distance
// in bytes, positive for PREFETCHNTA (PrefetchStream), negative for
// PREFETCHT0.
func q4pDist(pf Prefetch) int {
	if pf == PrefetchStream {
		return q4pStreamAhead
	}
	return -q4pKeepAhead
}

// q4pAVX2Masks holds, for each t = nb%16, the AVX2 kernels' lane masks of
// the short group's two halves: dword i of the first eight is set for
// lanes i < min(t, 8), dword i of the second for lanes 8+i < t.
var q4pAVX2Masks = func() (m [q4pGroup][q4pGroup]uint32) {
	for t := range m {
		for i := 0; i < t; i++ {
			m[t][i] = ^uint32(0)
		}
	}
	return m
}()
