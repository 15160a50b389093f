package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/weftrt/weft/ir"
)

// The lane-packed Q4_0 layout ("Q4_0 packed by sixteen"): a row of nb
// Q4_0 blocks keeps its 18·nb bytes, but each run of 16 blocks (a group)
// is stored as
//
//	[16 f16 scales, 32 bytes]
//	[chunk 0, 64 bytes] … [chunk 3, 64 bytes]
//
// where dword b of chunk j holds bytes 4j..4j+3 of block b's 16 code
// bytes: the low nibbles of chunk j are elements 4j..4j+3 of each block,
// the high nibbles elements 16+4j..16+4j+3. The last nb%16 = t blocks form
// a short group of the same shape with t lanes: 2t bytes of scales, then
// four chunks of 4t bytes. A 512-bit vector of a chunk then has one block
// per 32-bit lane, so one convert, one multiply and one FMA serve 16
// blocks, and no byte permutes are needed: about 25 vector instructions
// per 288 weight bytes against 56 for the GGUF layout's kernel (14 per four
// blocks). PackQ4Rows builds it from GGUF Q4_0 rows; the matching
// activation records are built by qPacked16.
const q4pGroup = 16

// PackQ4Rows returns the N×K Q4_0 weights w (GGUF block layout, row after
// row) in the lane-packed layout the packed Q4_0 kernels read
// (QMatMulPacked, QRows.InitPacked). Every row keeps its size, 18·K/32
// bytes, so row ranges slice the same way in both layouts.
func PackQ4Rows(w []byte, N, K int) ([]byte, error) {
	if N < 0 || K < 0 {
		return nil, fmt.Errorf("kernels: PackQ4Rows: %d×%d", N, K)
	}
	out := make([]byte, N*(K/qBlock)*18)
	return out, PackQ4RowsTo(out, w, N, K)
}

// PackQ4RowsTo is PackQ4Rows into dst (18·N·K/32 bytes).
func PackQ4RowsTo(dst, w []byte, N, K int) error {
	nb, err := packArgs("PackQ4Rows", ir.Q4_0, len(dst), len(w), N, K)
	if err != nil {
		return err
	}
	rb := nb * 18
	for n := 0; n < N; n++ {
		packQ4Row(dst[n*rb:(n+1)*rb], w[n*rb:(n+1)*rb], nb)
	}
	return nil
}

// packQ4Row packs one row of nb blocks from src into dst (both 18·nb
// bytes).
func packQ4Row(dst, src []byte, nb int) {
	le := binary.LittleEndian
	for g0 := 0; g0 < nb; g0 += q4pGroup {
		t := min(q4pGroup, nb-g0)
		d := dst[g0*18 : (g0+t)*18]
		c0, c1, c2, c3 := d[2*t:], d[6*t:], d[10*t:], d[14*t:]
		for b := 0; b < t; b++ {
			blk := (*[18]byte)(src[(g0+b)*18:])
			le.PutUint16(d[2*b:], le.Uint16(blk[0:]))
			le.PutUint32(c0[4*b:], le.Uint32(blk[2:]))
			le.PutUint32(c1[4*b:], le.Uint32(blk[6:]))
			le.PutUint32(c2[4*b:], le.Uint32(blk[10:]))
			le.PutUint32(c3[4*b:], le.Uint32(blk[14:]))
		}
	}
}

// UnpackQ4Rows is PackQ4Rows' inverse: it returns the GGUF Q4_0 rows of
// packed weights p (N×K).
func UnpackQ4Rows(p []byte, N, K int) ([]byte, error) {
	if K%qBlock != 0 || N < 0 || K < 0 {
		return nil, fmt.Errorf("kernels: UnpackQ4Rows: K=%d is not a multiple of %d", K, qBlock)
	}
	out := make([]byte, N*(K/qBlock)*18)
	return out, UnpackQ4RowsTo(out, p, N, K)
}

// UnpackQ4RowsTo is UnpackQ4Rows into dst (18·N·K/32 bytes).
func UnpackQ4RowsTo(dst, p []byte, N, K int) error {
	nb, err := packArgs("UnpackQ4Rows", ir.Q4_0, len(p), len(dst), N, K)
	if err != nil {
		return err
	}
	rb := nb * 18
	for n := 0; n < N; n++ {
		src, out := p[n*rb:(n+1)*rb], dst[n*rb:(n+1)*rb]
		for g0 := 0; g0 < nb; g0 += q4pGroup {
			t := min(q4pGroup, nb-g0)
			s := src[g0*18 : (g0+t)*18]
			for b := 0; b < t; b++ {
				blk := out[(g0+b)*18 : (g0+b+1)*18]
				blk[0], blk[1] = s[2*b], s[2*b+1]
				for j := 0; j < 4; j++ {
					o := 2*t + j*4*t + 4*b
					copy(blk[2+4*j:6+4*j], s[o:o+4])
				}
			}
		}
	}
	return nil
}

// q4pRec is the bytes of one activation record of the packed layout:
// eight 64-byte chunks of activations (chunk j < 4: dword b = block b's
// activations 4j..4j+3, the low nibbles' partners; chunk 4+j: its
// activations 16+4j..16+4j+3), 16 float32 block scales and 16 int32
// biases 8·nsum (the -8 offset of the codes). A short group's record has
// the same size with its lanes past t zero.
const q4pRec = 640

// q4pRecs is the number of activation records of a row of nb blocks:
// one per group, and where the short group has at most eight lanes one
// more, the short group's record with lanes 8..15 a copy of lanes 0..7,
// against which the decode kernel runs the short groups of two weight
// rows in one vector (dotQ4P512rows).
func q4pRecs(nb int) int {
	ng := (nb + q4pGroup - 1) / q4pGroup
	if t := nb % q4pGroup; t > 0 && t <= q4pGroup/2 {
		ng++
	}
	return ng
}

// qPacked16 returns x's activation records for the packed Q4_0 layout,
// q4pRecs(nb) per row, building them on first use after QuantizeActs.
func (q *QuantizedActs) qPacked16() []byte {
	if q.g4ok == qLayPacked16 {
		return q.g4
	}
	nb := q.K / qBlock
	ng, nr := (nb+q4pGroup-1)/q4pGroup, q4pRecs(nb)
	q.g4 = growAligned(q.g4, q.M*nr*q4pRec)
	if nb > 0 {
		for m := 0; m < q.M; m++ {
			row := q.g4[m*nr*q4pRec : (m+1)*nr*q4pRec]
			q4pActsRow(q.qs[m*q.K:(m+1)*q.K], q.d[m*nb:(m+1)*nb], q.nsum[m*nb:(m+1)*nb], row[:ng*q4pRec])
			if nr > ng {
				// The pair record: the short group's, lanes 0..7 twice.
				tail, pair := row[(ng-1)*q4pRec:ng*q4pRec], row[ng*q4pRec:]
				for c := 0; c < q4pRec; c += 64 {
					copy(pair[c:c+32], tail[c:c+32])
					copy(pair[c+32:c+64], tail[c:c+32])
				}
			}
		}
	}
	q.g4ok = qLayPacked16
	return q.g4
}

// q4pActsRow writes the packed records of one activation row (codes qs,
// scales d and nsums of len(d) blocks) into out, every byte of its
// ceil(len(d)/16) records: q4pActsAVX512 where the CPU has AVX-512 (six
// times faster at K = 4864, 1.7 → 0.3 µs, which every decode QMatMul
// pays before its workers start), else q4pActsGo.
var q4pActsRow = q4pActsGo

// q4pActsGo is q4pActsRow in plain Go.
func q4pActsGo(qs []int8, d []float32, nsum []int32, out []byte) {
	nb := len(d)
	clear(out)
	qb := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(qs))), len(qs))
	le := binary.LittleEndian
	for g := 0; g*q4pGroup < nb; g++ {
		r := (*[q4pRec]byte)(out[g*q4pRec:])
		for i := 0; i < min(q4pGroup, nb-g*q4pGroup); i++ {
			b := g*q4pGroup + i
			a := (*[32]byte)(qb[b*qBlock:])
			for j := 0; j < 8; j++ {
				le.PutUint32(r[64*j+4*i:], le.Uint32(a[4*j:]))
			}
			le.PutUint32(r[512+4*i:], math.Float32bits(d[b]))
			le.PutUint32(r[576+4*i:], uint32(8*nsum[b]))
		}
	}
}

// q4pKernel is a packed Q4_0 kernel for R activation rows (records ld
// bytes apart; sums of weight row i to y[r·ldy+i]). The one-row kernel
// prefetches its weights as pf says; the others do not prefetch.
type q4pKernel func(nr, nb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int, pf Prefetch)

// q4pSet is the packed kernels of one ISA level for one, four and eight
// activation rows; a nil x8 runs as two x4s.
type q4pSet struct{ x1, x4, x8 q4pKernel }

// q4pKernels holds each ISA level's packed kernels where the CPU has them
// (q4p_amd64.go: AVX-512 with VNNI, AVX2), else nils.
var q4pKernels [I8MM + 1]q4pSet

// q4pNow returns the packed kernels of the current ISA level.
func q4pNow() *q4pSet { return &q4pKernels[CurrentISA()] }

// q4pCheck reports whether a packed kernel call for R activation rows
// has work, and panics if its operands are shorter than the assembly
// reads or writes (callers check their inputs first: this is the last
// guard against memory outside the slices). bb is the bytes of one
// weight block (18 for Q4_0, 34 for Q8_0).
func q4pCheck(R, nr, nb, bb int, w []byte, rb int, lay []byte, ld int, y []float32, ldy int) bool {
	if nr == 0 || nb == 0 {
		return false
	}
	ng := q4pRecs(nb)
	if nr < 0 || rb < bb*nb || len(w) < (nr-1)*rb+bb*nb || ld < ng*q4pRec ||
		len(lay) < (R-1)*ld+ng*q4pRec || (R > 1 && ldy < nr) || len(y) < (R-1)*ldy+nr {
		panic(fmt.Sprintf("kernels: packed kernel (%d-byte blocks): operands out of range (R=%d nr=%d nb=%d rb=%d len(w)=%d ld=%d len(lay)=%d ldy=%d len(y)=%d)",
			bb, R, nr, nb, rb, len(w), ld, len(lay), ldy, len(y)))
	}
	return true
}

// QMatMulPacked is QMatMul for Q4_0 or Q8_0 weights in the lane-packed
// layout (PackRowsTo; N×K): y[m, n] = Σ_k x[m, k]·w[n, k]. Every sum comes
// out the same whatever x.M is (the one-, four- and eight-row kernels
// share one summation order). It shares QMatMul's rules on x. pf is how
// the one-row kernel (decode) prefetches the weights; it changes no
// result.
func QMatMulPacked(pool *Pool, dt ir.DType, w []byte, N int, x *QuantizedActs, y []float32, ldy int, pf Prefetch) error {
	if !PackedSupported(dt) {
		return fmt.Errorf("kernels: packed %v matmul: %w at ISA %s (wants AVX-512 VNNI, or AVX2 for q4_0)", dt, ir.ErrUnsupported, CurrentISA())
	}
	rb, done, err := qMatMulArgs("QMatMulPacked", dt, w, N, x, y, ldy)
	if done || err != nil {
		return err
	}
	j := q4pJobPool.Get().(*q4pJob)
	*j = q4pJob{ks: packedSet(dt), w: w, rb: rb, nb: x.K / qBlock, N: N, M: x.M, lay: x.qPacked16(), y: y, ldy: ldy, pf: pf}
	j.ld = q4pRecs(j.nb) * q4pRec
	j.rows = max(1, min((N+4*pool.Workers()-1)/(4*pool.Workers()), qTaskBytes/rb))
	pool.RunStream((N+j.rows-1)/j.rows, j)
	*j = q4pJob{}
	q4pJobPool.Put(j)
	return nil
}

// q4pJob is one QMatMulPacked: tasks of rows weight rows.
type q4pJob struct {
	ks        *q4pSet
	w         []byte
	rb, nb    int
	N, M      int
	lay       []byte
	ld        int
	y         []float32
	ldy, rows int
	pf        Prefetch
}

var q4pJobPool = sync.Pool{New: func() any { return new(q4pJob) }}

// Task computes weight rows [t·rows, (t+1)·rows) for every activation
// row: tiles of eight, then four, then one at a time.
func (j *q4pJob) Task(_, t int) {
	n0, n1 := t*j.rows, min(j.N, (t+1)*j.rows)
	j.ks.run(j.w[n0*j.rb:n1*j.rb], n1-n0, j.nb, j.rb, j.M, j.lay, j.ld, j.y[n0:], j.ldy, j.pf)
}

// run runs nr weight rows (rb bytes apart) against M activation rows of
// records (ld bytes apart) into y (leading dimension ldy).
func (ks *q4pSet) run(w []byte, nr, nb, rb, M int, lay []byte, ld int, y []float32, ldy int, pf Prefetch) {
	m := 0
	for ; ks.x8 != nil && m+8 <= M; m += 8 {
		ks.x8(nr, nb, w, rb, lay[m*ld:], ld, y[m*ldy:], ldy, pf)
	}
	for ; m+4 <= M; m += 4 {
		ks.x4(nr, nb, w, rb, lay[m*ld:], ld, y[m*ldy:], ldy, pf)
	}
	for ; m < M; m++ {
		ks.x1(nr, nb, w, rb, lay[m*ld:], ld, y[m*ldy:], ldy, pf)
	}
}

// InitPacked is Init for Q4_0 or Q8_0 weights in the lane-packed layout
// (PackRowsTo): Run then computes rows exactly as QMatMulPacked does at
// x.M == 1. It reports false where dt's packed kernels do not run or x is
// not one row.
func (r *QRows) InitPacked(dt ir.DType, x *QuantizedActs) bool {
	*r = QRows{}
	if x.M != 1 || !PackedSupported(dt) || x.K == 0 || x.K%qBlock != 0 {
		return false
	}
	nb := x.K / qBlock
	rb, err := qRowBytes(dt, x.K)
	if err != nil {
		return false
	}
	*r = QRows{q4p: packedSet(dt).x1, ng: nb, rb: rb, lay: x.qPacked16()}
	return true
}
