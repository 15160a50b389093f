package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/weftrt/weft/ir"
)

// qTaskBytes is the weight bytes per task of QMatMul.
var qTaskBytes = 65536

// qBlock is the number of elements per block of Q8_0, Q4_0 and of the
// quantized activations.
const qBlock = 32

// QuantizedActs is an M×K activation matrix quantized once per row into
// int8 blocks of 32 (q8_0-style: scale d = amax/127, q = round(x/d)), with
// the scale kept in float32 and the negated per-block sum of q (used to
// fold the -8 offset of Q4_0 weights into one integer correction per
// block). Reuse one QuantizedActs across calls to avoid allocations.
type QuantizedActs struct {
	M, K int
	qs   []int8    // M×K
	d    []float32 // M×K/32 block scales
	nsum []int32   // M×K/32 block sums of qs, negated

	// Derived layouts for particular kernels, built on first use after
	// each QuantizeActs (see qlay.go and qk.go).
	g4   []byte
	g4ok qLayout // the layout in g4, 0 for none
	kx   qkActs
}

// QuantizeActs quantizes the M×K row-major matrix x (leading dimension
// ldx) into q, growing q's buffers as needed. K must be a multiple of 32.
func QuantizeActs(q *QuantizedActs, x []float32, ldx, M, K int) error {
	if K%qBlock != 0 || K < 0 || M < 0 {
		return fmt.Errorf("kernels: QuantizeActs: K=%d is not a multiple of %d", K, qBlock)
	}
	if M > 0 && K > 0 && (ldx < K || len(x) < (M-1)*ldx+K) {
		return fmt.Errorf("kernels: QuantizeActs: %d floats with ld %d cannot hold %d×%d", len(x), ldx, M, K)
	}
	nb := M * K / qBlock
	q.M, q.K = M, K
	if cap(q.qs) < M*K {
		q.qs = make([]int8, M*K)
	}
	if cap(q.d) < nb {
		q.d, q.nsum = make([]float32, nb), make([]int32, nb)
	}
	q.qs, q.d, q.nsum = q.qs[:M*K], q.d[:nb], q.nsum[:nb]
	q.g4ok, q.kx.ok4, q.kx.ok6 = 0, false, false
	nbr := K / qBlock
	for m := 0; m < M; m++ {
		quantActsRow(x[m*ldx:m*ldx+K], q.qs[m*K:(m+1)*K], q.d[m*nbr:(m+1)*nbr], q.nsum[m*nbr:(m+1)*nbr])
	}
	return nil
}

// quantActsGeneric is QuantizeActs' scalar loop for one row: per block of
// 32, d = amax/127, q = round-half-even(x·(1/d)) clamped to [-127, 127],
// nsum = -Σq. The SIMD kernels reproduce it bit for bit.
func quantActsGeneric(row []float32, qrow []int8, ds []float32, nsums []int32) {
	for b := range ds {
		blk := row[b*qBlock : (b+1)*qBlock]
		var amax float32
		for _, v := range blk {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		var inv float32
		if d != 0 {
			inv = 1 / d
		}
		qs := qrow[b*qBlock : (b+1)*qBlock]
		var s int32
		for j, v := range blk {
			r := int32(math.RoundToEven(float64(v * inv)))
			r = min(127, max(-127, r))
			qs[j] = int8(r)
			s += r
		}
		ds[b], nsums[b] = d, -s
	}
}

// qRowBytes returns the bytes of one K-long row of dt, or an error for
// types without a quantized kernel.
func qRowBytes(dt ir.DType, K int) (int, error) {
	switch dt {
	case ir.Q8_0, ir.Q4_0:
	case ir.Q4_K, ir.Q6_K:
		if K%qkSuper != 0 {
			return 0, fmt.Errorf("kernels: quantized matmul on %v: K=%d is not a multiple of %d", dt, K, qkSuper)
		}
		return K / qkSuper * dt.BlockBytes(), nil
	default:
		return 0, fmt.Errorf("kernels: quantized matmul on %v: %w (want q8_0, q4_0, q4_k or q6_k)", dt, ir.ErrUnsupported)
	}
	if K%qBlock != 0 {
		return 0, fmt.Errorf("kernels: quantized matmul: K=%d is not a multiple of %d", K, qBlock)
	}
	// The block sizes as constants: DType.BlockBytes is a map lookup, and
	// this runs on every QMatMul call (every task of a QMatMulGroup).
	if dt == ir.Q4_0 {
		return K / qBlock * 18, nil
	}
	return K / qBlock * 34, nil
}

// QMatMul computes y[m, n] = Σ_k x[m, k]·w[n, k] for block-quantized
// weights w (N×K, dtype dt ∈ {Q8_0, Q4_0, Q4_K, Q6_K}, blocks along K,
// row after row; K a multiple of 256 for the K-quants)
// and activations x quantized with QuantizeActs; y is M×N with leading
// dimension ldy. Rows of w are spread over pool; each weight byte is read
// once. With x.M == 1 this is the decode GEMV. The first call after
// QuantizeActs may build kernel-specific layouts of the activations in x
// (qlay.go, qk.go), so calls sharing one x must not run concurrently.
func QMatMul(pool *Pool, dt ir.DType, w []byte, N int, x *QuantizedActs, y []float32, ldy int) error {
	rb, done, err := qMatMulArgs("QMatMul", dt, w, N, x, y, ldy)
	if done || err != nil {
		return err
	}
	if dt == ir.Q4_K || dt == ir.Q6_K {
		qkMatMul(pool, dt, w, rb, N, x, y, ldy)
		return nil
	}
	j := qJobPool.Get().(*qJob)
	isa := CurrentISA()
	outs := grow(j.outs, pool.Workers())
	*j = qJob{dt: dt, w: w, rb: rb, N: N, x: x, y: y, ldy: ldy, dot: qDotFunc(dt, isa), dot4: qDot4Func(dt, isa), outs: outs}
	// Every output element must round the same way whatever M is and
	// wherever its row falls in a four-row tile (speculative decoding
	// checks k tokens in one pass against one-token decoding): the
	// grouped one-row, four-row and many-weight-rows kernels share one
	// summation order, and so do dot and dot4, but the two families
	// differ, so a type with a four-row plain kernel and no four-row
	// grouped one uses the plain family only.
	g, l := groupedFunc(dt, isa)
	if g != nil && x.K/qBlock >= l.blocks() {
		j.grp, j.lay, j.rec, j.gb = g, x.qGroups(l), l.bytes(), l.blocks()
		if x.M >= 4 {
			j.grp4 = qGroup4Func(dt, isa)
			j.rows4 = qGroupRowsMFunc(dt, isa, 4)
			if x.M >= 8 {
				j.rows8 = qGroupRowsMFunc(dt, isa, 8)
			}
		}
		// Decode's one activation row, and with several the rows outside
		// the tiles of four and eight (M = 2, 3: speculative decoding's
		// verification passes): a task's weight rows per call.
		j.rowsK, _ = wholeGroupRows(dt, isa, x.K)
	}
	if j.dotRows = plainRowsFunc(dt, isa, x.K); j.dotRows != nil && x.M >= 4 {
		j.dotRows4 = qDotRows4Func(dt, isa)
	}
	if qPairFunc != nil && x.M >= 4 {
		j.pair = qPairFunc(dt, isa)
	}
	// Tasks of about 64 KiB of weights: few enough atomics, many enough
	// for balance.
	j.rows = max(1, min((N+4*pool.Workers()-1)/(4*pool.Workers()), qTaskBytes/rb))
	pool.RunStream((N+j.rows-1)/j.rows, j)
	*j = qJob{outs: outs}
	qJobPool.Put(j)
	return nil
}

// qMatMulArgs checks the operands of QMatMul (named name in errors) for
// weights of dtype dt and returns the bytes of a weight row; done reports
// that nothing is left to compute (no rows, or K = 0: y is then zero).
func qMatMulArgs(name string, dt ir.DType, w []byte, N int, x *QuantizedActs, y []float32, ldy int) (rb int, done bool, err error) {
	rb, err = qRowBytes(dt, x.K)
	if err != nil {
		return 0, true, err
	}
	if len(w) < N*rb {
		return 0, true, fmt.Errorf("kernels: %s: %v weights have %d bytes, want %d for %d×%d", name, dt, len(w), N*rb, N, x.K)
	}
	if x.M > 0 && N > 0 && (ldy < N || len(y) < (x.M-1)*ldy+N) {
		return 0, true, fmt.Errorf("kernels: %s: output has %d floats with ld %d, want %d×%d", name, len(y), ldy, x.M, N)
	}
	if x.M == 0 || N == 0 {
		return rb, true, nil
	}
	if x.K == 0 {
		for m := 0; m < x.M; m++ {
			clear(y[m*ldy : m*ldy+N])
		}
		return rb, true, nil
	}
	return rb, false, nil
}

// groupedFunc returns dt's grouped one-row kernel at isa and its layout,
// or a nil kernel where QMatMul keeps to the plain family (a type with a
// four-row plain kernel and no four-row grouped one: see QMatMul).
func groupedFunc(dt ir.DType, isa ISA) (qGroupDot, qLayout) {
	g, l := qGroupFunc(dt, isa)
	if g != nil && qDot4Func(dt, isa) != nil && qGroup4Func(dt, isa) == nil {
		return nil, l
	}
	return g, l
}

// rowsKFunc returns the many-weight-rows kernel QRows runs for
// activations x, and its layout: one activation row, the grouped family,
// K a whole number of groups; else nil.
func rowsKFunc(dt ir.DType, isa ISA, x *QuantizedActs) (qGroupRows, qLayout) {
	if x.M != 1 {
		_, l := groupedFunc(dt, isa)
		return nil, l
	}
	return wholeGroupRows(dt, isa, x.K)
}

// wholeGroupRows returns the grouped family's many-weight-rows kernel for
// one activation row of K elements, and its layout, where K is a whole
// number of groups; else nil.
func wholeGroupRows(dt ir.DType, isa ISA, K int) (qGroupRows, qLayout) {
	g, l := groupedFunc(dt, isa)
	if g == nil {
		return nil, l
	}
	if nb := K / qBlock; nb < l.blocks() || nb%l.blocks() != 0 {
		return nil, l
	}
	return qGroupRowsFunc(dt, isa), l
}

// plainRowsFunc returns the many-weight-rows kernel of the plain family
// that QMatMul runs for activation rows of K elements, where neither a
// grouped kernel nor a four-row plain one applies, or nil.
func plainRowsFunc(dt ir.DType, isa ISA, K int) qDotRows {
	if g, l := groupedFunc(dt, isa); (g != nil && K/qBlock >= l.blocks()) || qDot4Func(dt, isa) != nil {
		return nil
	}
	return qDotRowsFunc(dt, isa)
}

// qDot is a dot product of one quantized weight row (nb blocks at w) with
// one quantized activation row (qs, block scales d, negated block sums ns).
type qDot func(nb int, w []byte, qs []int8, d []float32, ns []int32) float32

// qDot4 is qDot for four consecutive activation rows (blocks of row r
// start at r·nb in d and ns, and at r·nb·32 in qs), writing four sums.
// Callers guarantee nb >= 1.
type qDot4 func(nb int, w []byte, qs []int8, d []float32, ns []int32, out *[4]float32)

// qDotRows is qDot for nr weight rows (rb bytes apart) against one
// activation row, y[i] = row i's sum, each bit for bit qDot's: one call
// per task of the decode GEMV, which prefetches the rows ahead.
type qDotRows func(nr, nb int, w []byte, rb int, qs []int8, d []float32, y []float32)

// qDotRows4 is qDotRows for four activation rows (codes K = 32·nb apart,
// scales nb apart), y[r·ldy+i] = weight row i · activation row r.
type qDotRows4 func(nr, nb int, w []byte, rb int, qs []int8, d []float32, y []float32, ldy int)

type qJob struct {
	dot4 qDot4
	dt   ir.DType
	w    []byte
	rb   int
	N    int
	x    *QuantizedActs
	y    []float32
	ldy  int
	rows int
	dot  qDot
	// dotRows is dot over a task's weight rows at once (the plain family:
	// no grouped kernel), or nil.
	dotRows  qDotRows
	dotRows4 qDotRows4 // dotRows for four activation rows at once, or nil
	// The grouped kernels (qlay.go), where the type and ISA have them:
	// grp for one activation row, grp4 for four (prefill), rowsK for a
	// task's weight rows at once against one activation row (K a whole
	// number of groups; decode, and rows outside the prefill tiles).
	grp   qGroupDot
	grp4  qGroupDot4
	rows4 qGroupRowsM // grp4 over a task's weight rows at once, or nil
	rows8 qGroupRowsM // the same for eight activation rows, or nil
	rowsK qGroupRows  // a task's weight rows against one activation row
	lay   []byte      // x's group layout when grp is set
	rec   int         // bytes per record of lay
	gb    int         // blocks per record
	pair  func(j *qJob, n int)
	// outs[w] is worker w's output buffer for dot4 (kept across uses: a
	// local passed to a func value would escape to the heap).
	outs []qOut
}

// qOut is a four-sum output buffer padded to a cache line.
type qOut struct {
	v [4]float32
	_ [48]byte
}

// qPairFunc, where an architecture sets it (arm64, for I8MM), returns the
// body that fills output columns n and n+1 of a job with at least four
// activation rows (two weight rows per pass), or nil.
var qPairFunc func(dt ir.DType, isa ISA) func(j *qJob, n int)

var qJobPool = sync.Pool{New: func() any { return new(qJob) }}

// Task computes rows [t*rows, (t+1)*rows) of the output's columns.
func (j *qJob) Task(worker, t int) {
	n0, n1 := t*j.rows, min(j.N, (t+1)*j.rows)
	if j.grp4 != nil {
		j.taskGrouped(n0, n1)
		return
	}
	if j.rowsK != nil {
		j.rowsEach(0, n0, n1)
		return
	}
	x := j.x
	nb := x.K / qBlock
	if j.dotRows != nil && j.pair == nil {
		m := 0
		if j.dotRows4 != nil && nb > 0 {
			for ; m+4 <= x.M; m += 4 {
				j.dotRows4(n1-n0, nb, j.w[n0*j.rb:n1*j.rb], j.rb, x.qs[m*x.K:(m+4)*x.K], x.d[m*nb:(m+4)*nb], j.y[m*j.ldy+n0:], j.ldy)
			}
		}
		for ; m < x.M; m++ {
			j.dotRows(n1-n0, nb, j.w[n0*j.rb:n1*j.rb], j.rb, x.qs[m*x.K:(m+1)*x.K], x.d[m*nb:(m+1)*nb], j.y[m*j.ldy+n0:m*j.ldy+n1])
		}
		return
	}
	for n := n0; n < n1; n++ {
		if j.pair != nil && n+1 < n1 {
			j.pair(j, n) // columns n and n+1
			n++
			continue
		}
		wr := j.w[n*j.rb : (n+1)*j.rb]
		m := 0
		if j.dot4 != nil && nb > 0 {
			// Four activation rows per pass over the weight row.
			out := &j.outs[worker].v
			for ; m+4 <= x.M; m += 4 {
				j.dot4(nb, wr, x.qs[m*x.K:(m+4)*x.K], x.d[m*nb:(m+4)*nb], x.nsum[m*nb:(m+4)*nb], out)
				for r, v := range out {
					j.y[(m+r)*j.ldy+n] = v
				}
			}
		}
		for ; m < x.M; m++ {
			j.y[m*j.ldy+n] = j.rowDot(m, nb, wr)
		}
	}
}

// taskGrouped is Task with the four-row grouped kernel: tiles of four
// activation rows (their records, 4·ng·rec bytes, stay in L1) against
// every weight row of the task (which stay in L2 after the first tile), so
// each weight block comes from memory once and is unpacked once per tile.
func (j *qJob) taskGrouped(n0, n1 int) {
	x := j.x
	nb := x.K / qBlock
	ng := nb / j.gb
	ld, b0 := ng*j.rec, ng*j.gb
	bb := j.rb / nb
	m := 0
	if j.rows8 != nil && b0 == nb {
		for ; m+8 <= x.M; m += 8 {
			j.rows8(n1-n0, ng, j.w[n0*j.rb:n1*j.rb], j.rb, j.lay[m*ld:(m+8)*ld], ld, j.y[m*j.ldy+n0:], j.ldy)
		}
	}
	for ; m+4 <= x.M; m += 4 {
		lay := j.lay[m*ld : (m+4)*ld]
		if j.rows4 != nil && b0 == nb {
			j.rows4(n1-n0, ng, j.w[n0*j.rb:n1*j.rb], j.rb, lay, ld, j.y[m*j.ldy+n0:], j.ldy)
			continue
		}
		for n := n0; n < n1; n++ {
			wr := j.w[n*j.rb : (n+1)*j.rb]
			out := j.grp4(ng, wr, lay, ld)
			for r, v := range out {
				if b0 < nb {
					mr := m + r
					v += j.dot(nb-b0, wr[b0*bb:], x.qs[(mr*nb+b0)*qBlock:(mr+1)*x.K], x.d[mr*nb+b0:(mr+1)*nb], x.nsum[mr*nb+b0:(mr+1)*nb])
				}
				j.y[(m+r)*j.ldy+n] = v
			}
		}
	}
	if j.rowsK != nil {
		j.rowsEach(m, n0, n1)
		return
	}
	for ; m < x.M; m++ {
		for n := n0; n < n1; n++ {
			j.y[m*j.ldy+n] = j.rowDot(m, nb, j.w[n*j.rb:(n+1)*j.rb])
		}
	}
}

// rowsEach runs rowsK over weight rows [n0, n1) for activation rows m0 and
// up, one at a time.
func (j *qJob) rowsEach(m0, n0, n1 int) {
	ng := j.x.K / qBlock / j.gb
	ld := ng * j.rec
	for m := m0; m < j.x.M; m++ {
		j.rowsK(n1-n0, ng, j.w[n0*j.rb:n1*j.rb], j.rb, j.lay[m*ld:(m+1)*ld], j.y[m*j.ldy+n0:m*j.ldy+n1], PrefetchKeep)
	}
}

// rowDot is the dot product of weight row wr with activation row m: the
// grouped kernel over the full groups of blocks, the plain one over the
// rest.
func (j *qJob) rowDot(m, nb int, wr []byte) float32 {
	x, b0 := j.x, 0
	var acc float32
	if j.grp != nil {
		ng := nb / j.gb
		acc = j.grp(ng, wr, j.lay[m*ng*j.rec:(m+1)*ng*j.rec])
		b0 = ng * j.gb
	}
	if b0 < nb {
		bb := j.rb / nb
		acc += j.dot(nb-b0, wr[b0*bb:], x.qs[(m*nb+b0)*qBlock:(m+1)*x.K], x.d[m*nb+b0:(m+1)*nb], x.nsum[m*nb+b0:(m+1)*nb])
	}
	return acc
}

// halfToFloat converts an IEEE half (the block scale) to float32.
func halfToFloat(h uint16) float32 { return ir.F16ToF32(h) }

// dotQ8Generic is the plain-Go Q8_0 × q8 row dot product.
func dotQ8Generic(nb int, w []byte, qs []int8, d []float32, _ []int32) float32 {
	var acc float32
	for b := 0; b < nb; b++ {
		blk := w[b*34 : b*34+34]
		a := qs[b*qBlock : b*qBlock+qBlock]
		var s int32
		for j, av := range a {
			s += int32(int8(blk[2+j])) * int32(av)
		}
		acc += halfToFloat(binary.LittleEndian.Uint16(blk)) * d[b] * float32(s)
	}
	return acc
}

// dotQ4Generic is the plain-Go Q4_0 × q8 row dot product: the nibbles are
// used unsigned and the -8 offset is folded in as +8·(-Σa) per block.
func dotQ4Generic(nb int, w []byte, qs []int8, d []float32, nsum []int32) float32 {
	var acc float32
	for b := 0; b < nb; b++ {
		blk := w[b*18 : b*18+18]
		a := qs[b*qBlock : b*qBlock+qBlock]
		s := 8 * nsum[b]
		for j := 0; j < 16; j++ {
			q := blk[2+j]
			s += int32(q&15)*int32(a[j]) + int32(q>>4)*int32(a[j+16])
		}
		acc += halfToFloat(binary.LittleEndian.Uint16(blk)) * d[b] * float32(s)
	}
	return acc
}
