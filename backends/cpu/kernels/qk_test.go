package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// randKWeights returns N×K random K-quant weights of dt and their values
// decoded by ir/quant (the oracle). Q4_K rows alternate between the
// encoder's output for random floats and raw random bytes (every 6-bit
// scale and min pattern, including the high bits of sub-blocks 4..7);
// Q6_K blocks are random bytes with a controlled scale d.
func randKWeights(t *testing.T, r *rand.Rand, dt ir.DType, N, K int) ([]byte, []float32) {
	t.Helper()
	rb := K / qkSuper * dt.BlockBytes()
	w := make([]byte, N*rb)
	for n := 0; n < N; n++ {
		row := w[n*rb : (n+1)*rb]
		if dt == ir.Q4_K && n%2 == 0 {
			if err := quant.QuantizeRowQ4K(row, randFloats(r, K)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for i := range row {
			row[i] = byte(r.Uint32())
		}
		for sb := 0; sb < K/qkSuper; sb++ {
			blk := row[sb*dt.BlockBytes():]
			d := float32(r.Float64()*0.02 + 0.001)
			if sb%3 == 1 {
				d = -d
			}
			if dt == ir.Q4_K {
				binary.LittleEndian.PutUint16(blk, ir.F32ToF16(d/8))
				binary.LittleEndian.PutUint16(blk[2:], ir.F32ToF16(float32(r.Float64()*0.01)))
			} else {
				binary.LittleEndian.PutUint16(blk[208:], ir.F32ToF16(d/16))
			}
		}
	}
	deq := make([]float32, N*K)
	if err := quant.DecodeRow(dt, deq, w); err != nil {
		t.Fatal(err)
	}
	return w, deq
}

// checkQMatMul compares y (M×N, ld ldy) with the float dot products of
// the decoded weights and the activations x (ld ldx), within the error of
// the activation rounding: |w|·da/2 per element, da from qa.
func checkQMatMul(t *testing.T, name string, qa *QuantizedActs, x []float32, ldx int, deq []float32, y []float32, ldy, M, N, K int) {
	t.Helper()
	for m := 0; m < M; m++ {
		for n := 0; n < N; n++ {
			var want, tol float64
			for k := 0; k < K; k++ {
				wv, xv := float64(deq[n*K+k]), float64(x[m*ldx+k])
				want += wv * xv
				tol += math.Abs(wv)*float64(qa.d[(m*K+k)/qBlock])/2 + 1e-5*math.Abs(wv*xv)
			}
			if got := float64(y[m*ldy+n]); math.Abs(got-want) > tol*1.01+1e-6 {
				t.Fatalf("%s: y[%d,%d] = %g, want %g ± %g", name, m, n, got, want, tol)
			}
		}
	}
}

func TestQMatMulKQuants(t *testing.T) {
	pool := NewPool(3)
	defer pool.Close()
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		for _, dt := range []ir.DType{ir.Q4_K, ir.Q6_K} {
			for _, sh := range [][3]int{{1, 1, 256}, {1, 7, 512}, {3, 5, 768}, {1, 33, 256}, {2, 41, 4096}, {5, 3, 1024}, {9, 6, 256}, {4, 130, 512}} {
				M, N, K := sh[0], sh[1], sh[2]
				name := fmt.Sprintf("%v/%dx%dx%d", dt, M, N, K)
				w, deq := randKWeights(t, r, dt, N, K)
				ldx := K + 32
				x := randFloats(r, M*ldx)
				for i := 0; i < len(x); i += 7 {
					x[i] *= 10 // outliers stretch a block's scale
				}
				var qa QuantizedActs
				if err := QuantizeActs(&qa, x, ldx, M, K); err != nil {
					t.Fatal(err)
				}
				ldy := N + 3
				y := make([]float32, (M-1)*ldy+N)
				if err := QMatMul(pool, dt, w, N, &qa, y, ldy); err != nil {
					t.Fatal(err)
				}
				checkQMatMul(t, name, &qa, x, ldx, deq, y, ldy, M, N, K)
				// A second type on the same activations reuses their
				// derived layouts; a requantization must rebuild them.
				x2 := randFloats(r, M*ldx)
				if err := QuantizeActs(&qa, x2, ldx, M, K); err != nil {
					t.Fatal(err)
				}
				if err := QMatMul(nil, dt, w, N, &qa, y, ldy); err != nil {
					t.Fatal(err)
				}
				checkQMatMul(t, name+"/requantized", &qa, x2, ldx, deq, y, ldy, M, N, K)
			}
		}
	})
}

// TestQMatMulKQuantsExact checks the integer path exactly: activations on
// the q8 grid quantize without error, so only float rounding remains. M
// covers the many-rows decode kernel (1), the single-row one (3) and the
// four-row one with a single-row tail (5).
func TestQMatMulKQuantsExact(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(17, 18))
		for _, dt := range []ir.DType{ir.Q4_K, ir.Q6_K} {
			for _, M := range []int{1, 3, 5} {
				N, K := 5, 768
				w, deq := randKWeights(t, r, dt, N, K)
				x := make([]float32, M*K)
				for i := range x {
					x[i] = float32(r.IntN(255)-127) / 64
				}
				for b := 0; b < M*K; b += qBlock {
					x[b] = 127.0 / 64 // d = 1/64 exactly
				}
				var qa QuantizedActs
				if err := QuantizeActs(&qa, x, K, M, K); err != nil {
					t.Fatal(err)
				}
				y := make([]float32, M*N)
				if err := QMatMul(nil, dt, w, N, &qa, y, N); err != nil {
					t.Fatal(err)
				}
				for m := 0; m < M; m++ {
					for n := 0; n < N; n++ {
						var want, mag float64
						for k := 0; k < K; k++ {
							want += float64(deq[n*K+k]) * float64(x[m*K+k])
							mag += math.Abs(float64(deq[n*K+k]) * float64(x[m*K+k]))
						}
						if got := y[m*N+n]; math.Abs(float64(got)-want) > 1e-5*mag {
							t.Fatalf("%v M=%d: y[%d,%d] = %g, want %g", dt, M, m, n, got, want)
						}
					}
				}
			}
		}
	})
}

// TestQMatMulNoAllocs: after a warm-up, quantizing the activations and
// running QMatMul allocate nothing (the derived layouts reuse their
// buffers, the jobs come from pools).
func TestQMatMulNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	pool := NewPool(2)
	defer pool.Close()
	forEachISA(t, func(t *testing.T) { qmatmulNoAllocs(t, pool) })
}

func qmatmulNoAllocs(t *testing.T, pool *Pool) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0, ir.Q4_K, ir.Q6_K} {
		for _, M := range []int{1, 5} {
			N, K := 64, 512
			w := make([]byte, N*int(dt.Bytes(int64(K))))
			x := randFloats(r, M*K)
			y := make([]float32, M*N)
			var qa QuantizedActs
			run := func() {
				if err := QuantizeActs(&qa, x, K, M, K); err != nil {
					t.Fatal(err)
				}
				if err := QMatMul(pool, dt, w, N, &qa, y, N); err != nil {
					t.Fatal(err)
				}
			}
			run()
			if a := testing.AllocsPerRun(20, run); a != 0 {
				t.Errorf("%v M=%d: %v allocations per run", dt, M, a)
			}
		}
	}
}
