package kernels

import (
	"encoding/binary"
	"sync"

	"github.com/weftrt/weft/ir"
)

// K-quant (Q4_K, Q6_K) row dot products against q8 activations. The
// weights are GGUF super-blocks of 256 elements (layouts in ir/quant's
// kquant.go): Q4_K has 8 sub-blocks of 32 with 6-bit scales and mins,
// Q6_K 16 sub-blocks of 16 with signed 8-bit scales. The activations keep
// QuantizeActs' blocks of 32, which line up with both: a Q4_K sub-block is
// one activation block, a Q6_K sub-block half of one. Per sub-block s the
// integer dot Σ q·a is scaled by d·sc_s·da_s in float; the rest folds into
// activation-side sums computed once per QuantizeActs:
//
//	Q4_K  x = d·sc·q − dmin·m:  − dmin·m_s·σ_s,     σ_s = da_s·Σa (per 32)
//	Q6_K  x = d·sc·(q − 32):    + d·sc_s·da_s·β_s,  β_s = −32·Σa (per 16)

// qkSuper is the number of elements of a K-quant super-block.
const qkSuper = 256

// qkActs holds the activation layouts of the K-quant kernels, built on
// first use after QuantizeActs.
type qkActs struct {
	ok4, ok6 bool
	q4       []int8    // M×K: Q4_K SIMD order (blocks 0,2,1,3,4,6,5,7 per 256)
	sig      []float32 // M×K/32: σ = da·Σa per block of 32
	ds       []float32 // M×K/16: per super-block [da0..7, σ0..7] (SIMD)
	d16      []float32 // M×K/16: the activation scale of each half block
	b16      []float32 // M×K/16: β = −32·Σa per half block
}

// q4kOrder is the order of the 32-element activation blocks of one super-
// block in the Q4_K SIMD layout: a 64-byte vector of low nibbles holds
// sub-blocks 2g and 2g+2 of a pair of groups, the high nibbles 2g+1, 2g+3.
var q4kOrder = [8]int{0, 2, 1, 3, 4, 6, 5, 7}

// q4K returns the Q4_K activation arrays of q: the SIMD-ordered codes, σ
// per block and the SIMD scale array ds.
func (q *QuantizedActs) q4K() ([]int8, []float32, []float32) {
	x := &q.kx
	if !x.ok4 {
		nb := q.M * q.K / qBlock
		x.q4, x.sig, x.ds = grow(x.q4, q.M*q.K), grow(x.sig, nb), grow(x.ds, 2*nb)
		for s := 0; s < q.M*q.K/qkSuper; s++ {
			for i, b := range q4kOrder {
				copy(x.q4[s*qkSuper+i*qBlock:s*qkSuper+(i+1)*qBlock], q.qs[s*qkSuper+b*qBlock:s*qkSuper+(b+1)*qBlock])
			}
		}
		for b := range nb {
			x.sig[b] = -q.d[b] * float32(q.nsum[b])
			s, i := b/8, b%8
			x.ds[16*s+i], x.ds[16*s+8+i] = q.d[b], x.sig[b]
		}
		x.ok4 = true
	}
	return x.q4, x.sig, x.ds
}

// q6K returns the Q6_K activation arrays of q: da and β per half block.
func (q *QuantizedActs) q6K() ([]float32, []float32) {
	x := &q.kx
	if !x.ok6 {
		nh := q.M * q.K / 16
		x.d16, x.b16 = grow(x.d16, nh), grow(x.b16, nh)
		for h := range nh {
			var s int32
			for _, v := range q.qs[h*16 : h*16+16] {
				s += int32(v)
			}
			x.d16[h], x.b16[h] = q.d[h/2], float32(-32*s)
		}
		x.ok6 = true
	}
	return x.d16, x.b16
}

// grow returns s resized to n, reallocated if too small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// qkDot is a K-quant row dot product over nsb super-blocks of weights w.
// For Q4_K, qs are the activation codes (natural order for the generic
// kernel, q4kOrder for the SIMD ones), s1 the block scales da and s2 σ
// (the SIMD ones take both in s1 = s2 = ds); for Q6_K, qs are the codes,
// s1 d16 and s2 b16.
type qkDot func(nsb int, w []byte, qs []int8, s1, s2 []float32) float32

// qkDot4 is qkDot for four activation rows: row r's codes start at r·K in
// qs, its floats at r·ld in s1 and s2; nsb >= 1. The sums come back by
// value (an out pointer through a func value would escape to the heap).
type qkDot4 func(nsb int, w []byte, qs []int8, s1, s2 []float32, K, ld int) [4]float32

// qkRows is qkDot for nr >= 1 weight rows, rb bytes apart, writing
// y[0:nr]; nsb >= 1.
type qkRows func(nr, nsb int, w []byte, rb int, qs []int8, s1, s2 []float32, y []float32)

// qkRows4 is qkDot4 for nr >= 1 weight rows, rb bytes apart: the sums of
// weight row i with activation row r go to y[r·ldy+i]; nsb >= 1.
type qkRows4 func(nr, nsb int, w []byte, rb int, qs []int8, s1, s2 []float32, K, ld int, y []float32, ldy int)

// qkSpec describes the K-quant kernels chosen for a type and ISA level.
type qkSpec struct {
	dot     qkDot
	dot4    qkDot4  // nil where there is no four-row kernel
	rows    qkRows  // nil where there is no many-weight-rows kernel
	rows4   qkRows4 // dot4 over many weight rows, or nil
	ordered bool    // Q4_K: the kernels want the q4kOrder codes and ds
}

// kScaleMin unpacks the 6-bit scale and min of sub-block j of a Q4_K
// super-block from its 12 packed bytes (see ir/quant's scaleMin).
func kScaleMin(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0x0f | q[j-4]>>6<<4, q[j+4]>>4 | q[j]>>6<<4
}

// dotQ4KGeneric is the plain-Go Q4_K × q8 row dot (natural activation
// order).
func dotQ4KGeneric(nsb int, w []byte, qs []int8, da, sig []float32) float32 {
	var acc float32
	for sb := 0; sb < nsb; sb++ {
		blk := w[sb*144 : sb*144+144]
		d := halfToFloat(binary.LittleEndian.Uint16(blk))
		dmin := halfToFloat(binary.LittleEndian.Uint16(blk[2:]))
		scales, codes := blk[4:16], blk[16:144]
		a := qs[sb*qkSuper : sb*qkSuper+qkSuper]
		var main, mins float32
		for g := 0; g < 4; g++ {
			q := codes[32*g : 32*g+32]
			a1, a2 := a[64*g:64*g+32], a[64*g+32:64*g+64]
			var s1, s2 int32
			for l, c := range q {
				s1 += int32(c&15) * int32(a1[l])
				s2 += int32(c>>4) * int32(a2[l])
			}
			sc1, m1 := kScaleMin(2*g, scales)
			sc2, m2 := kScaleMin(2*g+1, scales)
			b := sb*8 + 2*g
			main += float32(sc1)*da[b]*float32(s1) + float32(sc2)*da[b+1]*float32(s2)
			mins += float32(m1)*sig[b] + float32(m2)*sig[b+1]
		}
		acc += d*main - dmin*mins
	}
	return acc
}

// dotQ6KGeneric is the plain-Go Q6_K × q8 row dot.
func dotQ6KGeneric(nsb int, w []byte, qs []int8, d16, b16 []float32) float32 {
	var acc float32
	for sb := 0; sb < nsb; sb++ {
		blk := w[sb*210 : sb*210+210]
		d := halfToFloat(binary.LittleEndian.Uint16(blk[208:]))
		a := qs[sb*qkSuper : sb*qkSuper+qkSuper]
		var sums [16]int32
		for h := 0; h < 2; h++ {
			ql, qh := blk[64*h:64*h+64], blk[128+32*h:128+32*h+32]
			for l := 0; l < 32; l++ {
				codes := [4]uint8{
					ql[l]&0x0f | (qh[l]&3)<<4,
					ql[32+l]&0x0f | (qh[l]>>2&3)<<4,
					ql[l]>>4 | (qh[l]>>4&3)<<4,
					ql[32+l]>>4 | (qh[l]>>6&3)<<4,
				}
				for k, c := range codes {
					e := 128*h + 32*k + l
					sums[e/16] += int32(c) * int32(a[e])
				}
			}
		}
		var s float32
		for i, v := range sums {
			h := sb*16 + i
			s += float32(int8(blk[192+i])) * d16[h] * (float32(v) + b16[h])
		}
		acc += d * s
	}
	return acc
}

// qkJob is QMatMul for K-quant weights. A task owns a range of weight rows
// (about qTaskBytes of weights, so they stay in cache) and runs every
// activation row against it: the weights are streamed from memory once.
type qkJob struct {
	spec qkSpec
	w    []byte
	rb   int
	N    int
	M    int
	nsb  int
	qs   []int8
	s1   []float32
	s2   []float32
	y    []float32
	ldy  int
	rows int
	n1   int // s1, s2 floats per activation row
}

func (j *qkJob) Task(_, t int) {
	K := j.nsb * qkSuper
	n0, n1 := t*j.rows, min(j.N, (t+1)*j.rows)
	if j.M == 1 && j.spec.rows != nil && j.nsb > 0 {
		// Decode GEMV: the task's weight rows in one call.
		j.spec.rows(n1-n0, j.nsb, j.w[n0*j.rb:n1*j.rb], j.rb, j.qs[:K], j.s1[:j.n1], j.s2[:j.n1], j.y[n0:n1])
		return
	}
	m := 0
	if d4 := j.spec.dot4; (d4 != nil || j.spec.rows4 != nil) && j.nsb > 0 {
		// Four activation rows per pass over each weight row.
		for ; m+4 <= j.M; m += 4 {
			qs := j.qs[m*K : (m+4)*K]
			s1, s2 := j.s1[m*j.n1:(m+4)*j.n1], j.s2[m*j.n1:(m+4)*j.n1]
			if r4 := j.spec.rows4; r4 != nil {
				r4(n1-n0, j.nsb, j.w[n0*j.rb:n1*j.rb], j.rb, qs, s1, s2, K, j.n1, j.y[m*j.ldy+n0:], j.ldy)
				continue
			}
			for n := n0; n < n1; n++ {
				out := d4(j.nsb, j.w[n*j.rb:(n+1)*j.rb], qs, s1, s2, K, j.n1)
				for r, v := range out {
					j.y[(m+r)*j.ldy+n] = v
				}
			}
		}
	}
	for ; m < j.M; m++ {
		qs := j.qs[m*K : (m+1)*K]
		s1, s2 := j.s1[m*j.n1:(m+1)*j.n1], j.s2[m*j.n1:(m+1)*j.n1]
		if j.spec.rows != nil && j.nsb > 0 {
			j.spec.rows(n1-n0, j.nsb, j.w[n0*j.rb:n1*j.rb], j.rb, qs, s1, s2, j.y[m*j.ldy+n0:m*j.ldy+n1])
			continue
		}
		for n := n0; n < n1; n++ {
			j.y[m*j.ldy+n] = j.spec.dot(j.nsb, j.w[n*j.rb:(n+1)*j.rb], qs, s1, s2)
		}
	}
}

// qkMatMul is QMatMul for Q4_K and Q6_K weights (arguments checked).
func qkMatMul(pool *Pool, dt ir.DType, w []byte, rb, N int, x *QuantizedActs, y []float32, ldy int) {
	j := qkJobPool.Get().(*qkJob)
	*j = qkJob{spec: qkFunc(dt, CurrentISA()), w: w, rb: rb, N: N, M: x.M, nsb: x.K / qkSuper, y: y, ldy: ldy}
	if dt == ir.Q4_K {
		q4, sig, ds := x.q4K()
		j.qs, j.s1, j.s2, j.n1 = x.qs, x.d, sig, x.K/qBlock
		if j.spec.ordered {
			j.qs, j.s1, j.s2, j.n1 = q4, ds, ds, x.K/16
		}
	} else {
		d16, b16 := x.q6K()
		j.qs, j.s1, j.s2, j.n1 = x.qs, d16, b16, x.K/16
	}
	j.rows = max(1, min((N+4*pool.Workers()-1)/(4*pool.Workers()), qTaskBytes/rb))
	pool.RunStream((N+j.rows-1)/j.rows, j)
	*j = qkJob{}
	qkJobPool.Put(j)
}

var qkJobPool = sync.Pool{New: func() any { return new(qkJob) }}
