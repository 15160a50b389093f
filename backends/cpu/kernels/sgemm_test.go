package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/backends/cpu/ref"
	_ "github.com/weftrt/weft/backends/cpu/ref/nn"
	"github.com/weftrt/weft/ir"
)

// naiveGemm is the triple loop in float64; it also returns Σ|a||b| per
// element, which bounds the float32 rounding error.
func naiveGemm(M, N, K int, a []float32, lda int, b []float32, ldb int) (want, mag []float64) {
	want, mag = make([]float64, M*N), make([]float64, M*N)
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			var s, m float64
			for k := 0; k < K; k++ {
				p := float64(a[i*lda+k]) * float64(b[k*ldb+j])
				s += p
				m += math.Abs(p)
			}
			want[i*N+j], mag[i*N+j] = s, m
		}
	}
	return want, mag
}

func checkClose(t *testing.T, what string, M, N int, c []float32, ldc int, want, mag []float64) {
	t.Helper()
	bad := 0
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			got, w := float64(c[i*ldc+j]), want[i*N+j]
			if math.Abs(got-w) > 1e-5*mag[i*N+j]+1e-6 {
				if bad < 5 {
					t.Errorf("%s: C[%d,%d] = %g, want %g", what, i, j, got, w)
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements wrong", what, bad, M*N)
	}
}

var gemmShapes = [][3]int{
	{1, 1, 1}, {1, 7, 3}, {3, 1, 5}, {2, 2, 1}, {5, 33, 17}, {13, 31, 64},
	{14, 32, 256}, {15, 33, 257}, {29, 65, 300}, {6, 16, 4}, {7, 17, 9},
	{1, 100, 513}, {37, 48, 128}, {100, 3, 70}, {43, 97, 531}, {600, 40, 20},
}

func TestSgemm(t *testing.T) {
	pools := map[string]*Pool{"serial": nil, "pool3": NewPool(3)}
	defer pools["pool3"].Close()
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, sh := range gemmShapes {
			M, N, K := sh[0], sh[1], sh[2]
			// Leading dimensions larger than the rows, to catch stride bugs.
			lda, ldb, ldc := K+3, N+1, N+5
			a, b := randFloats(r, M*lda), randFloats(r, K*ldb)
			want, mag := naiveGemm(M, N, K, a, lda, b, ldb)
			for pname, pool := range pools {
				name := fmt.Sprintf("%dx%dx%d/%s", M, N, K, pname)
				c := randFloats(r, (M-1)*ldc+N)
				guard := append([]float32(nil), c...)
				Sgemm(pool, M, N, K, a, lda, b, ldb, c, ldc, false)
				checkClose(t, name, M, N, c, ldc, want, mag)
				// Padding between rows must be untouched.
				for i := 0; i < M-1; i++ {
					for j := N; j < ldc; j++ {
						if c[i*ldc+j] != guard[i*ldc+j] {
							t.Fatalf("%s: wrote outside C at row %d col %d", name, i, j)
						}
					}
				}
				// Accumulate: C += A·B on top of the result gives 2·A·B.
				pbT := PackBT(transposed(b, K, N, ldb), K, K, N)
				SgemmPacked(pool, M, a, lda, pbT, c, ldc, true)
				w2 := make([]float64, len(want))
				m2 := make([]float64, len(mag))
				for i := range want {
					w2[i], m2[i] = 2*want[i], 2*mag[i]
				}
				checkClose(t, name+"/acc+transB", M, N, c, ldc, w2, m2)
			}
		}
	})
}

// transposed returns the N×K transpose of the K×N matrix b (leading dim ldb).
func transposed(b []float32, K, N, ldb int) []float32 {
	bt := make([]float32, N*K)
	for k := 0; k < K; k++ {
		for n := 0; n < N; n++ {
			bt[n*K+k] = b[k*ldb+n]
		}
	}
	return bt
}

func TestSgemmZeroK(t *testing.T) {
	c := []float32{1, 2, 3, 4}
	Sgemm(nil, 2, 2, 0, nil, 0, nil, 2, c, 2, true)
	if c[0] != 1 || c[3] != 4 {
		t.Fatalf("K=0 accumulate changed C: %v", c)
	}
	Sgemm(nil, 2, 2, 0, nil, 0, nil, 2, c, 2, false)
	for _, v := range c {
		if v != 0 {
			t.Fatalf("K=0 overwrite left %v", c)
		}
	}
}

// TestSgemmVsReference checks against the reference MatMul kernel.
func TestSgemmVsReference(t *testing.T) {
	mm, ok := ref.Lookup("MatMul")
	if !ok {
		t.Fatal("reference MatMul not registered")
	}
	pool := NewPool(2)
	defer pool.Close()
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, sh := range [][3]int{{1, 1, 1}, {9, 45, 77}, {64, 64, 300}, {3, 130, 2}} {
			M, N, K := sh[0], sh[1], sh[2]
			a, b := randFloats(r, M*K), randFloats(r, K*N)
			out, err := mm(nil, nil, []*ir.Tensor{
				ir.FromFloat32([]int64{int64(M), int64(K)}, a),
				ir.FromFloat32([]int64{int64(K), int64(N)}, b),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := out[0].Float32s()
			c := make([]float32, M*N)
			Sgemm(pool, M, N, K, a, K, b, N, c, N, false)
			for i := range c {
				if d := math.Abs(float64(c[i] - want[i])); d > 1e-4*math.Sqrt(float64(K)) {
					t.Fatalf("%v: C[%d] = %g, reference %g", sh, i, c[i], want[i])
				}
			}
		}
	})
}

func TestSgemmBadArgs(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("short C did not panic")
		}
	}()
	Sgemm(nil, 2, 2, 2, make([]float32, 4), 2, make([]float32, 4), 2, make([]float32, 3), 2, false)
}
