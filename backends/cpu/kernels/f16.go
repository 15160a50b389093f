package kernels

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/weftrt/weft/ir"
)

// Half-precision weights (F16 and BF16) converted in registers.
//
// HalfMatMul computes y = x·wᵀ for a constant weight w [N, K] stored as
// IEEE half (F16) or bfloat16 (BF16) and float32 activations: each weight
// element is widened to float32 in a register (VCVTPH2PS for F16; a zero
// extension and a 16-bit left shift for BF16, which is exactly the bf16 →
// f32 conversion) and multiplied in float32, so the result equals "convert
// w to f32, then an f32 matmul" up to the summation order. VDPBF16PS is
// not used: it would round the activations to bf16 (8 significant bits),
// far from f32 accuracy.
//
// The kernels compute dot products along K: a micro-kernel takes up to
// four activation rows and four weight rows and returns the 4×4 (or 1×4)
// block of sums. At M = 1 (decode) that is a GEMV that reads every weight
// byte once, four rows streaming side by side; at M > 1 the weight rows of
// a task stay in cache while blocks of activation rows pass by, so weights
// are read from memory about once per mBlockHalf rows.

// Tuning: weight bytes per GEMV task, and the activation rows per cache
// block of the GEMM.
var (
	hTaskBytes = 65536
	mBlockHalf = 64
)

// halfGemv is a 1×4 micro-kernel: out[n] = Σ_{i<k} x[i]·w[n][i] for the
// four weight rows w (k a multiple of the kernel's step).
type halfGemv func(k int, w *[4]unsafe.Pointer, x *float32, out *[4]float32)

// halfGemm is an mr×4 micro-kernel: out[m*4+n] = Σ_{i<k} x[m][i]·w[n][i].
type halfGemm func(k int, w *[4]unsafe.Pointer, x *[4]*float32, out *[16]float32)

// halfGemvN is the GEMV over groups×4 consecutive weight rows (row stride
// ldw bytes) storing 4·groups sums at y: one call per task.
type halfGemvN func(k int, w unsafe.Pointer, ldw, groups int, x, y *float32)

// halfKernels are the micro-kernels of one ISA level and weight type.
type halfKernels struct {
	gemvN halfGemvN // nil: gemv per four rows
	gemv  halfGemv
	gemm  halfGemm // nil: gemv once per activation row
	mr    int      // activation rows of gemm
	step  int      // k granularity of both; the remainder is done in Go
}

// HalfMatMul computes y[m, n] = Σ_k x[m, k]·w[n, k] for an N×K weight w of
// dt (ir.Float16 or ir.BFloat16, little-endian, row after row), x an M×K
// float32 matrix (leading dimension ldx) and y M×N (ldy). Weight rows are
// spread over pool. It returns an error for another dt or slices too short
// for the shapes.
func HalfMatMul(pool *Pool, dt ir.DType, w []byte, N, K int, x []float32, ldx, M int, y []float32, ldy int) error {
	return HalfMatMulBuf(pool, dt, w, N, K, x, ldx, M, y, ldy, nil)
}

// HalfMatMulBuf is HalfMatMul with caller-owned memory for the packed
// activations of the many-row path: with len(abuf) >= M·K the call never
// allocates (nil: a pooled buffer).
func HalfMatMulBuf(pool *Pool, dt ir.DType, w []byte, N, K int, x []float32, ldx, M int, y []float32, ldy int, abuf []float32) error {
	return halfMatMul(pool, dt, w, N, K, x, ldx, M, y, ldy, abuf, true)
}

// HalfMatMulRows is HalfMatMul without the packed many-row path: every
// row of y comes from the dot-product kernels, bit for bit what a call
// with that activation row alone (M = 1) computes, whatever M is and
// however the weight rows are split among calls (in runs of whole groups
// of four). A speculative decoder's verification pass (QMatMulGroup in a
// graph of every token's logits, fast_llm_group.go) relies on it; at 32
// rows and more it is slower than HalfMatMul, whose packed GEMM sums in
// another order.
func HalfMatMulRows(pool *Pool, dt ir.DType, w []byte, N, K int, x []float32, ldx, M int, y []float32, ldy int) error {
	return halfMatMul(pool, dt, w, N, K, x, ldx, M, y, ldy, nil, false)
}

// halfMatMul is HalfMatMulBuf; packed=false never takes the packed path.
func halfMatMul(pool *Pool, dt ir.DType, w []byte, N, K int, x []float32, ldx, M int, y []float32, ldy int, abuf []float32, packed bool) error {
	if dt != ir.Float16 && dt != ir.BFloat16 {
		return fmt.Errorf("kernels: HalfMatMul on %v: %w (want f16 or bf16)", dt, ir.ErrUnsupported)
	}
	if N < 0 || K < 0 || M < 0 {
		return fmt.Errorf("kernels: HalfMatMul: negative shape M=%d N=%d K=%d", M, N, K)
	}
	if len(w) < 2*N*K {
		return fmt.Errorf("kernels: HalfMatMul: %v weights have %d bytes, want %d for %d×%d", dt, len(w), 2*N*K, N, K)
	}
	if M > 0 && K > 0 && (ldx < K || len(x) < (M-1)*ldx+K) {
		return fmt.Errorf("kernels: HalfMatMul: input has %d floats with ld %d, want %d×%d", len(x), ldx, M, K)
	}
	if M > 0 && N > 0 && (ldy < N || len(y) < (M-1)*ldy+N) {
		return fmt.Errorf("kernels: HalfMatMul: output has %d floats with ld %d, want %d×%d", len(y), ldy, M, N)
	}
	if M == 0 || N == 0 {
		return nil
	}
	if K == 0 {
		for m := 0; m < M; m++ {
			clear(y[m*ldy : m*ldy+N])
		}
		return nil
	}
	if packed && M >= hPackMinM && halfGemmPacked(pool, dt, w, N, K, x, ldx, M, y, ldy, abuf) {
		return nil
	}
	j := hJobPool.Get().(*hJob)
	*j = hJob{bf16: dt == ir.BFloat16, w: w, N: N, K: K, x: x, ldx: ldx, M: M, y: y, ldy: ldy,
		k: halfKernelsFor(dt, CurrentISA())}
	rb := 2 * K
	if M == 1 {
		// Tasks of about 64 KiB of weights, and at least four per worker.
		j.rows = roundUp(max(1, min((N+4*pool.Workers()-1)/(4*pool.Workers()), hTaskBytes/rb)), 4)
	} else {
		// A task's weight rows (at most ~48 KiB) stay in L1/L2 while the
		// activation rows stream past them.
		j.rows = max(4, min((N+2*pool.Workers()-1)/(2*pool.Workers()), 49152/rb)) &^ 3
	}
	pool.RunStream((N+j.rows-1)/j.rows, j)
	*j = hJob{}
	hJobPool.Put(j)
	return nil
}

// hJob is one HalfMatMul call; task t computes output columns
// [t*rows, (t+1)*rows) for every activation row.
type hJob struct {
	k    halfKernels
	bf16 bool
	w    []byte
	N, K int
	x    []float32
	ldx  int
	M    int
	y    []float32
	ldy  int
	rows int
}

var hJobPool = sync.Pool{New: func() any { return new(hJob) }}

// hScratch is a worker's row buffer for the generic kernel and the
// pointer and result blocks of the assembly ones (kept off the stack: the
// kernels are called through function values, so their pointer arguments
// escape).
type hScratch struct {
	row []float32
	wp  [4]unsafe.Pointer
	xp  [4]*float32
	out [16]float32
}

var hScratchPool = sync.Pool{New: func() any { return new(hScratch) }}

func (j *hJob) Task(_, t int) {
	n0, n1 := t*j.rows, min(j.N, (t+1)*j.rows)
	if j.k.gemv == nil {
		j.generic(n0, n1)
		return
	}
	K, kmain := j.K, j.K/j.k.step*j.k.step
	if j.M == 1 && j.k.gemvN != nil && kmain > 0 && n1-n0 >= 4 {
		groups := (n1 - n0) / 4
		xr := j.x[:K]
		_ = j.y[n0+4*groups-1]
		j.k.gemvN(kmain, unsafe.Pointer(&j.w[2*n0*K]), 2*K, groups, &xr[0], &j.y[n0])
		if kmain < K {
			for n := n0; n < n0+4*groups; n++ {
				j.y[n] += j.tail(n, xr, kmain)
			}
		}
		n0 += 4 * groups
	}
	if n0 >= n1 {
		return
	}
	sc := hScratchPool.Get().(*hScratch)
	defer hScratchPool.Put(sc)
	wp, out, xp := &sc.wp, &sc.out, &sc.xp
	for mb := 0; mb < j.M; mb += mBlockHalf {
		me := min(j.M, mb+mBlockHalf)
		for n := n0; n < n1; n += 4 {
			nv := min(4, n1-n) // valid weight rows; the others repeat the last
			for r := range wp {
				wp[r] = unsafe.Pointer(&j.w[2*(n+min(r, nv-1))*K])
			}
			m := mb
			if j.M == 1 || kmain == 0 || j.k.gemm == nil {
				for ; m < me; m++ {
					xr := j.x[m*j.ldx : m*j.ldx+K]
					o := (*[4]float32)(out[:4])
					if kmain > 0 {
						j.k.gemv(kmain, wp, &xr[0], o)
					} else {
						*o = [4]float32{}
					}
					for r := 0; r < nv; r++ {
						j.y[m*j.ldy+n+r] = o[r] + j.tail(n+r, xr, kmain)
					}
				}
				continue
			}
			for ; m < me; m += j.k.mr {
				mv := min(j.k.mr, me-m)
				for r := range xp {
					xp[r] = &j.x[(m+min(r, mv-1))*j.ldx]
				}
				// The last row of x must hold kmain floats past xp[mv-1];
				// HalfMatMul checked len(x) >= (M-1)*ldx+K.
				j.k.gemm(kmain, wp, xp, out)
				for a := 0; a < mv; a++ {
					xr := j.x[(m+a)*j.ldx : (m+a)*j.ldx+K]
					for r := 0; r < nv; r++ {
						j.y[(m+a)*j.ldy+n+r] = out[a*4+r] + j.tail(n+r, xr, kmain)
					}
				}
			}
		}
	}
}

// tail returns Σ_{i>=k0} x[i]·w[n][i]: the elements past the kernels' step.
func (j *hJob) tail(n int, x []float32, k0 int) float32 {
	var s float32
	if k0 == j.K {
		return 0
	}
	wr := j.w[2*n*j.K : 2*(n+1)*j.K]
	for i := k0; i < j.K; i++ {
		s += x[i] * j.half(wr[2*i:])
	}
	return s
}

// half decodes the weight at b[0:2].
func (j *hJob) half(b []byte) float32 {
	h := uint16(b[0]) | uint16(b[1])<<8
	if j.bf16 {
		return math.Float32frombits(uint32(h) << 16)
	}
	return ir.F16ToF32(h)
}

// generic is the plain-Go task: decode a weight row once, then dot it
// with every activation row.
func (j *hJob) generic(n0, n1 int) {
	s := hScratchPool.Get().(*hScratch)
	if cap(s.row) < j.K {
		s.row = make([]float32, j.K)
	}
	row := s.row[:j.K]
	for n := n0; n < n1; n++ {
		DecodeHalfRow(row, j.w[2*n*j.K:2*(n+1)*j.K], j.bf16)
		for m := 0; m < j.M; m++ {
			j.y[m*j.ldy+n] = dotF32(row, j.x[m*j.ldx:m*j.ldx+j.K])
		}
	}
	hScratchPool.Put(s)
}

// DecodeHalfRow widens len(dst) little-endian F16 (or BF16, when bf16 is
// set) values at src to float32.
func DecodeHalfRow(dst []float32, src []byte, bf16 bool) {
	src = src[:2*len(dst)]
	for i := range dst {
		h := uint16(src[2*i]) | uint16(src[2*i+1])<<8
		if bf16 {
			dst[i] = math.Float32frombits(uint32(h) << 16)
		} else {
			dst[i] = ir.F16ToF32(h)
		}
	}
}

// dotF32 is a plain dot product with four partial sums.
func dotF32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
