package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// halfWeights returns n×k random weights of dt (f16 or bf16 bits) and
// their exact float32 values.
func halfWeights(r *rand.Rand, dt ir.DType, n, k int) ([]byte, []float32) {
	w, f := make([]byte, 2*n*k), make([]float32, n*k)
	for i := range f {
		v := float32(r.NormFloat64())
		var h uint16
		if dt == ir.BFloat16 {
			h = ir.F32ToBF16(v)
			f[i] = ir.BF16ToF32(h)
		} else {
			h = ir.F32ToF16(v)
			f[i] = ir.F16ToF32(h)
		}
		w[2*i], w[2*i+1] = byte(h), byte(h>>8)
	}
	return w, f
}

// TestHalfMatMul checks HalfMatMul against the reference (widen the weight
// to f32, then a float64 matmul) at every ISA level, on shapes with k and
// n tails, one and several activation rows, and padded leading dimensions.
func TestHalfMatMul(t *testing.T) {
	shapes := []struct{ M, N, K int }{
		{1, 1, 1}, {1, 4, 16}, {1, 7, 33}, {1, 37, 100}, {1, 260, 768}, {1, 5, 7},
		{2, 3, 8}, {3, 9, 47}, {4, 8, 64}, {5, 13, 129}, {7, 6, 15}, {17, 33, 250}, {70, 20, 96}, {130, 9, 17}, {20, 70, 401}, {16, 64, 384},
	}
	// Both GEMM paths: packed tiles over the SGEMM micro-kernels (AVX-512)
	// at every M, and the dot-product kernels throughout.
	for _, packMin := range []int{1, 1 << 30} {
		defer func(v int) { hPackMinM = v }(hPackMinM)
		hPackMinM = packMin
		testHalfMatMul(t, shapes)
	}
}

func testHalfMatMul(t *testing.T, shapes []struct{ M, N, K int }) {
	for _, dt := range []ir.DType{ir.Float16, ir.BFloat16} {
		forEachISA(t, func(t *testing.T) {
			pool := NewPool(2)
			defer pool.Close()
			for i, s := range shapes {
				t.Run(fmt.Sprintf("%v/%dx%dx%d", dt, s.M, s.N, s.K), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(i), 5))
					w, wf := halfWeights(r, dt, s.N, s.K)
					ldx, ldy := s.K+3, s.N+2
					x := randFloats(r, (s.M-1)*ldx+s.K)
					y := make([]float32, (s.M-1)*ldy+s.N)
					for i := range y {
						y[i] = float32(math.NaN()) // every output must be written
					}
					if err := HalfMatMul(pool, dt, w, s.N, s.K, x, ldx, s.M, y, ldy); err != nil {
						t.Fatal(err)
					}
					for m := 0; m < s.M; m++ {
						for n := 0; n < s.N; n++ {
							var want, mag float64
							for k := 0; k < s.K; k++ {
								p := float64(x[m*ldx+k]) * float64(wf[n*s.K+k])
								want += p
								mag += math.Abs(p)
							}
							got := float64(y[m*ldy+n])
							if math.Abs(got-want) > 1e-6*mag+1e-7 || math.IsNaN(got) {
								t.Fatalf("y[%d, %d] = %g, want %g (|terms| %g)", m, n, got, want, mag)
							}
						}
					}
				})
			}
		})
	}
}

func TestHalfMatMulErrors(t *testing.T) {
	w := make([]byte, 2*4*8)
	x, y := make([]float32, 8), make([]float32, 4)
	err := HalfMatMul(nil, ir.Float32, w, 4, 8, x, 8, 1, y, 4)
	if !errors.Is(err, ir.ErrUnsupported) {
		t.Fatalf("f32 weights: err = %v, want ErrUnsupported", err)
	}
	for name, call := range map[string]func() error{
		"short w": func() error { return HalfMatMul(nil, ir.Float16, w[:10], 4, 8, x, 8, 1, y, 4) },
		"short x": func() error { return HalfMatMul(nil, ir.Float16, w, 4, 8, x[:7], 8, 1, y, 4) },
		"short y": func() error { return HalfMatMul(nil, ir.BFloat16, w, 4, 8, x, 8, 1, y[:3], 4) },
	} {
		if call() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
