package kernels

import (
	"sync"
	"unsafe"

	"github.com/weftrt/weft/ir"
)

// The half-weight GEMM over the f32 SGEMM micro-kernels (AVX-512, AVX2):
// for enough activation rows the dot-product kernels of f16.go leave half
// the FMA peak unused, so each task converts a K block of its weight
// panels into the SGEMM's packed-B tile layout (kc×nr f32: 32 wide with
// AVX-512, 16 with AVX2, in a per-worker scratch of at most 24 KiB that
// stays in L1/L2) and runs the register-blocked micro-kernels over all
// rows of packed activations. The conversion is a transpose (weights are
// [N, K], tiles k-major): with AVX-512 a gather reads the pair (k, k+1)
// of 16 rows at once, about 0.1 cycle per element; with AVX2, 8×8 blocks
// widened and transposed in registers; either is small next to the M·nr
// multiply-adds each converted column feeds.

// hPackMinM is the least number of activation rows that takes the packed
// path. Below it the dot-product kernels are faster: converting a tile
// costs about what 16 rows of multiply-adds on it do (measured on Zen 5,
// 2048×768 weight, CPU time: packed 90 GFLOP/s at M=16 and 160 at M=128,
// dot-product 110 and 120, f32 SGEMM 200; on a Zen 3 guest with AVX2, two
// threads: packed 84, 98 and 122 GFLOP/s at M = 16, 32 and 128,
// dot-product 92, 74 and 81).
var hPackMinM = 32

// halfPack converts kk2 pairs of k (2·kk2 rows of a 32-wide tile) from the
// weight rows at w + idx[r] bytes (rows r < 16 where bit r of m0 is set,
// rows 16+r where bit r of m1 is; the others are zero) into dst.
type halfPack func(kk2 int, w unsafe.Pointer, idx *[32]int32, m0, m1 uint64, dst *float32)

// halfPackT converts kb blocks of the packer's k block (kb·block rows of
// a tile) of a full panel, nr weight rows ldw bytes apart from w, into dst.
type halfPackT func(kb int, w unsafe.Pointer, ldw int, dst *float32)

// halfPacking is an ISA level's conversion of weight panels for the
// packed GEMM: packT for the full panels' whole k blocks of kb, pack (for
// 32-wide panels; nil: a loop in Go) for the rest. The zero value: no
// packed GEMM.
type halfPacking struct {
	pack  halfPack
	packT halfPackT
	kb    int
}

// hpJob is a packed half GEMM; like sgemmJob, task t is M block
// t/nChunks times column chunk t%nChunks, and the packing phase packs A.
type hpJob struct {
	halfPacking
	isa         ISA
	bf16        bool
	w           []byte
	N, K        int
	a           []float32
	lda         int
	M           int
	c           []float32
	ldc         int
	mr, nr, kc  int
	mc          int
	chunk, nChk int
	apack       []float32
	packing     bool
	idx         [32]int32
}

var hpJobPool = sync.Pool{New: func() any { return new(hpJob) }}

// hTile is a worker's converted weight tile, and its aside tile of C for
// a partial panel where the kernel has no column masks.
type hTile struct{ t, c []float32 }

var hTilePool = sync.Pool{New: func() any { return new(hTile) }}

// halfGemmPacked computes y = x·wᵀ like HalfMatMul (whose checks it
// relies on) with the packed path; it reports false when the ISA level has
// no packer.
func halfGemmPacked(pool *Pool, dt ir.DType, w []byte, N, K int, x []float32, ldx, M int, y []float32, ldy int, abuf []float32) bool {
	isa := CurrentISA()
	hp := halfPackFor(dt, isa)
	mr, nr := archShape(isa)
	if hp.packT == nil || (hp.pack != nil && nr != 32) || archKernel(isa, nr, mr) == nil || 2*K*31 > 1<<31-1 {
		return false
	}
	j := hpJobPool.Get().(*hpJob)
	*j = hpJob{halfPacking: hp, isa: isa, bf16: dt == ir.BFloat16, w: w, N: N, K: K, a: x, lda: ldx, M: M, c: y, ldc: ldy,
		mr: mr, nr: nr, kc: kcBlock}
	for r := range j.idx {
		j.idx[r] = int32(2 * K * r)
	}
	mBlocks := (M + mcBlock - 1) / mcBlock
	j.mc = roundUp((M+mBlocks-1)/mBlocks, mr)
	mBlocks = (M + j.mc - 1) / j.mc
	np := (N + nr - 1) / nr
	chunks := min(np, max(1, (4*pool.Workers()+mBlocks-1)/mBlocks))
	j.chunk = (np + chunks - 1) / chunks
	j.nChk = (np + j.chunk - 1) / j.chunk
	var buf *[]float32
	if len(abuf) >= M*K {
		j.apack = abuf[:M*K]
	} else {
		buf = getFloats(M * K)
		j.apack = *buf
	}
	j.packing = true
	pool.RunTasks(mBlocks*((K+j.kc-1)/j.kc), j)
	j.packing = false
	pool.RunTasks(mBlocks*j.nChk, j)
	if buf != nil {
		putFloats(buf)
	}
	*j = hpJob{}
	hpJobPool.Put(j)
	return true
}

func (j *hpJob) Task(_, t int) {
	K := j.K
	if j.packing {
		kBlocks := (K + j.kc - 1) / j.kc
		mb, kb := t/kBlocks, t%kBlocks
		i0, k0 := mb*j.mc, kb*j.kc
		mcb := min(j.mc, j.M-i0)
		packA(j.apack[i0*K+k0*mcb:], j.a, j.lda, i0, mcb, k0, min(j.kc, K-k0), j.mr)
		return
	}
	mb, nc := t/j.nChk, t%j.nChk
	i0 := mb * j.mc
	mcb := min(j.mc, j.M-i0)
	p0 := nc * j.chunk
	p1 := min(p0+j.chunk, (j.N+j.nr-1)/j.nr)
	s := hTilePool.Get().(*hTile)
	if cap(s.t) < j.kc*j.nr {
		s.t = make([]float32, j.kc*j.nr)
	}
	if cap(s.c) < j.mr*j.nr {
		s.c = make([]float32, j.mr*j.nr)
	}
	for k0 := 0; k0 < K; k0 += j.kc {
		kcb := min(j.kc, K-k0)
		apk := j.apack[i0*K+k0*mcb : i0*K+(k0+kcb)*mcb]
		iacc := 0
		if k0 > 0 {
			iacc = 1
		}
		for p := p0; p < p1; p++ {
			n0 := p * j.nr
			ncols := min(j.nr, j.N-n0)
			tile := s.t[:kcb*j.nr]
			j.convert(tile, n0, ncols, k0, kcb)
			mask := uint32(uint64(1)<<ncols - 1)
			for ir := 0; ir < mcb; ir += j.mr {
				rows := min(j.mr, mcb-ir)
				c := j.c[(i0+ir)*j.ldc+n0 : (i0+ir+rows-1)*j.ldc+n0+ncols] // bounds of the tile
				fn := archKernel(j.isa, j.nr, rows)
				if ncols < j.nr && j.isa != AVX512 {
					// A kernel without column masks (AVX2) writes whole
					// panels: the last one goes aside (sgemm's edge).
					edgeTile(fn, rows, ncols, j.nr, kcb, apk[ir*kcb:], tile, c, j.ldc, iacc == 1, s.c[:rows*j.nr])
					continue
				}
				fn(kcb, &apk[ir*kcb], &tile[0], &c[0], j.ldc, mask, iacc)
			}
		}
	}
	hTilePool.Put(s)
}

// convert fills tile (kcb×nr) with columns n0..n0+ncols of the weight's K
// range [k0, k0+kcb), zero past ncols.
func (j *hpJob) convert(tile []float32, n0, ncols, k0, kcb int) {
	done := 0
	if ncols == j.nr && kcb >= j.kb {
		// Full panels (all but the last): the transposing packer.
		done = kcb / j.kb * j.kb
		j.packT(kcb/j.kb, unsafe.Pointer(&j.w[2*(n0*j.K+k0)]), 2*j.K, &tile[0])
	}
	if j.pack == nil {
		j.convertGo(tile, n0, ncols, k0, done, kcb)
		return
	}
	m := uint64(1)<<ncols - 1
	if kk2 := (kcb - done) / 2; kk2 > 0 {
		j.pack(kk2, unsafe.Pointer(&j.w[2*(n0*j.K+k0+done)]), &j.idx, m&0xFFFF, m>>16, &tile[done*j.nr])
	}
	if kcb%2 == 1 {
		// The last k of an odd block: a pair would read past the row.
		j.convertGo(tile, n0, ncols, k0, kcb-1, kcb)
	}
}

// convertGo is convert's loop in Go for tile rows [k1, kcb) (the rows
// the packers left: a k tail, or a whole partial panel without pack).
func (j *hpJob) convertGo(tile []float32, n0, ncols, k0, k1, kcb int) {
	for kk := k1; kk < kcb; kk++ {
		row := tile[kk*j.nr : (kk+1)*j.nr]
		clear(row[ncols:])
		for c := 0; c < ncols; c++ {
			b := j.w[2*((n0+c)*j.K+k0+kk):]
			h := uint16(b[0]) | uint16(b[1])<<8
			if j.bf16 {
				row[c] = ir.BF16ToF32(h)
			} else {
				row[c] = ir.F16ToF32(h)
			}
		}
	}
}
