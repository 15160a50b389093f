package kernels

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// randQWeights returns N×K random weights of dt in GGUF block layout and
// their dequantized values.
func randQWeights(r *rand.Rand, dt ir.DType, N, K int) ([]byte, []float64) {
	bb := dt.BlockBytes()
	w := make([]byte, N*K/qBlock*bb)
	deq := make([]float64, N*K)
	for b := 0; b < N*K/qBlock; b++ {
		blk := w[b*bb : (b+1)*bb]
		h := ir.F32ToF16(float32(r.Float64()*0.02 + 0.001))
		if b%17 == 3 {
			h = ir.F32ToF16(-0.004) // negative scales occur in real files
		}
		binary.LittleEndian.PutUint16(blk, h)
		d := float64(ir.F16ToF32(h))
		out := deq[b*qBlock : (b+1)*qBlock]
		switch dt {
		case ir.Q8_0:
			for j := 0; j < qBlock; j++ {
				q := int8(r.IntN(256) - 128)
				if b%5 == 0 {
					q = -128 // the extreme value must survive the sign trick
				}
				blk[2+j] = byte(q)
				out[j] = d * float64(q)
			}
		case ir.Q4_0:
			for j := 0; j < 16; j++ {
				lo, hi := r.IntN(16), r.IntN(16)
				blk[2+j] = byte(lo | hi<<4)
				out[j], out[j+16] = d*float64(lo-8), d*float64(hi-8)
			}
		}
	}
	return w, deq
}

func TestQMatMul(t *testing.T) {
	pool := NewPool(3)
	defer pool.Close()
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0} {
			for _, sh := range [][3]int{{1, 1, 32}, {1, 7, 64}, {3, 5, 96}, {1, 33, 256}, {2, 129, 4096}, {5, 3, 1024}, {4, 17, 128}, {9, 6, 64}, {1, 5, 160}, {1, 3, 224}, {2, 9, 416}, {6, 4, 384}, {5, 7, 224}, {8, 3, 416}, {8, 5, 256}, {13, 9, 384}, {16, 33, 896}, {12, 7, 128}} {
				M, N, K := sh[0], sh[1], sh[2]
				name := fmt.Sprintf("%v/%dx%dx%d", dt, M, N, K)
				w, deq := randQWeights(r, dt, N, K)
				ldx := K + 32
				x := randFloats(r, M*ldx)
				for i := 0; i < len(x); i += 7 {
					x[i] *= 10 // outliers stretch a block's scale
				}
				var qa QuantizedActs
				if err := QuantizeActs(&qa, x, ldx, M, K); err != nil {
					t.Fatal(err)
				}
				ldy := N + 2
				y := make([]float32, (M-1)*ldy+N)
				if err := QMatMul(pool, dt, w, N, &qa, y, ldy); err != nil {
					t.Fatal(err)
				}
				for m := 0; m < M; m++ {
					for n := 0; n < N; n++ {
						var want, tol float64
						for b := 0; b < K/qBlock; b++ {
							da := float64(qa.d[m*K/qBlock+b])
							for j := b * qBlock; j < (b+1)*qBlock; j++ {
								wv, xv := deq[n*K+j], float64(x[m*ldx+j])
								want += wv * xv
								// Activation rounding error is at most da/2 per element.
								tol += math.Abs(wv)*da/2 + 1e-5*math.Abs(wv*xv)
							}
						}
						if got := float64(y[m*ldy+n]); math.Abs(got-want) > tol*1.01+1e-6 {
							t.Fatalf("%s: y[%d,%d] = %g, want %g ± %g", name, m, n, got, want, tol)
						}
					}
				}
			}
		}
	})
}

// TestQMatMulExact checks the integer path exactly: activations that are
// already on the q8 grid quantize without error. M and K cover the decode
// kernels (M = 1), single rows (3), four-row tiles with a tail row (5),
// and K with blocks past the last full group (288 = 9 blocks).
func TestQMatMulExact(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0} {
			for _, M := range []int{1, 3, 5} {
				for _, K := range []int{256, 288} {
					N := 9
					w, deq := randQWeights(r, dt, N, K)
					x := make([]float32, M*K)
					for i := range x {
						x[i] = float32(r.IntN(255)-127) / 64 // on the grid of d = 127/64/127
					}
					for b := 0; b < M*K; b += qBlock {
						x[b] = 127.0 / 64 // pin each block's amax so d = 1/64 exactly
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
								want += deq[n*K+k] * float64(x[m*K+k])
								mag += math.Abs(deq[n*K+k] * float64(x[m*K+k]))
							}
							if got := y[m*N+n]; math.Abs(float64(got)-want) > 1e-5*mag {
								t.Fatalf("%v M=%d K=%d: y[%d,%d] = %g, want %g", dt, M, K, m, n, got, want)
							}
						}
					}
				}
			}
		}
	})
}

func TestQMatMulErrors(t *testing.T) {
	var qa QuantizedActs
	if err := QuantizeActs(&qa, make([]float32, 40), 40, 1, 40); err == nil {
		t.Error("K=40 accepted")
	}
	if err := QuantizeActs(&qa, make([]float32, 32), 32, 1, 32); err != nil {
		t.Fatal(err)
	}
	err := QMatMul(nil, ir.Q5_K, make([]byte, 1000), 1, &qa, make([]float32, 1), 1)
	if !errors.Is(err, ir.ErrUnsupported) {
		t.Errorf("Q5_K: err = %v, want ErrUnsupported", err)
	}
	if err := QMatMul(nil, ir.Q4_K, make([]byte, 1000), 1, &qa, make([]float32, 1), 1); err == nil {
		t.Error("Q4_K with K=32 accepted")
	}
	if err := QMatMul(nil, ir.Q8_0, make([]byte, 33), 1, &qa, make([]float32, 1), 1); err == nil {
		t.Error("short weights accepted")
	}
	if err := QMatMul(nil, ir.Q8_0, make([]byte, 68), 2, &qa, make([]float32, 1), 2); err == nil {
		t.Error("short output accepted")
	}
	// K = 0: an empty sum.
	if err := QuantizeActs(&qa, nil, 0, 2, 0); err != nil {
		t.Fatal(err)
	}
	y := []float32{5, 5, 5, 5}
	if err := QMatMul(nil, ir.Q4_0, nil, 2, &qa, y, 2); err != nil || y[0] != 0 || y[1] != 0 || y[2] != 0 || y[3] != 0 {
		t.Errorf("K=0: y = %v, err = %v", y, err)
	}
}
