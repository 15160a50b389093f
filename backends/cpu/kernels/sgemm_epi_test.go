package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// epiActs are the activations an Epilogue runs, with their float64
// formulas and a bound on the slope (which scales the GEMM's rounding).
var epiActs = []struct {
	name  string
	f     func([]float32)
	relu  bool
	ref   func(float64) float64
	slope float64
}{
	{"none", nil, false, func(x float64) float64 { return x }, 1},
	{"relu", nil, true, func(x float64) float64 { return math.Max(x, 0) }, 1},
	{"gelu", GeluErf, false, func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, 1.2},
	{"gelutanh", GeluTanh, false, func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}, 1.2},
	{"silu", SiLU, false, func(x float64) float64 { return x / (1 + math.Exp(-x)) }, 1.1},
	{"sigmoid", Sigmoid, false, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, 0.25},
}

// TestSgemmEpilogue checks the fused epilogue against the float64 product
// followed by the float64 epilogue, for every activation, bias form
// (none, scalar, per column) and with and without a residual, on shapes
// with row and column tails, serial and pooled, at every ISA level.
func TestSgemmEpilogue(t *testing.T) {
	pools := map[string]*Pool{"serial": nil, "pool3": NewPool(3)}
	defer pools["pool3"].Close()
	shapes := append([][3]int{{3, 5, 0}, {200, 70, 400}}, gemmShapes...)
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, sh := range shapes {
			M, N, K := sh[0], sh[1], sh[2]
			lda, ldc, ldz := K+1, N+3, N+2
			a, b := randFloats(r, max(M*lda, 1)), randFloats(r, max(K*N, 1))
			want, mag := naiveGemm(M, N, K, a, lda, b, N)
			pb := PackB(b, N, K, N)
			z := randFloats(r, M*ldz)
			biases := map[string][]float32{"nobias": nil, "scalar": {0.375}, "col": randFloats(r, N)}
			for pname, pool := range pools {
				for bname, bias := range biases {
					for _, resid := range []bool{false, true} {
						for _, act := range epiActs {
							name := fmt.Sprintf("%dx%dx%d/%s/%s/z=%v/%s", M, N, K, pname, bname, resid, act.name)
							e := Epilogue{Bias: bias, Relu: act.relu, Act: act.f}
							if resid {
								e.Z, e.LDZ = z, ldz
							}
							c := randFloats(r, (M-1)*ldc+N)
							guard := append([]float32(nil), c...)
							SgemmPackedEpi(pool, M, a, lda, pb, c, ldc, false, nil, &e)
							checkEpilogue(t, name, M, N, c, ldc, want, mag, func(i, j int) float64 {
								v := want[i*N+j]
								switch len(bias) {
								case 1:
									v += float64(bias[0])
								case N:
									v += float64(bias[j])
								}
								if resid {
									v += float64(z[i*ldz+j])
								}
								return act.ref(v)
							}, act.slope)
							for i := 0; i < M-1; i++ {
								for j := N; j < ldc; j++ {
									if c[i*ldc+j] != guard[i*ldc+j] {
										t.Fatalf("%s: wrote outside C at row %d col %d", name, i, j)
									}
								}
							}
						}
					}
				}
			}
		}
	})
}

// checkEpilogue compares c with ref(i, j), allowing the GEMM's rounding
// (scaled by the activation's slope) and the activations' own error.
func checkEpilogue(t *testing.T, what string, M, N int, c []float32, ldc int, _, mag []float64, ref func(i, j int) float64, slope float64) {
	t.Helper()
	bad := 0
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			got, w := float64(c[i*ldc+j]), ref(i, j)
			if math.Abs(got-w) > slope*(1e-5*mag[i*N+j]+2e-6)+1e-6*math.Max(1, math.Abs(w)) {
				if bad < 5 {
					t.Errorf("%s: C[%d,%d] = %g, want %g", what, i, j, got, w)
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d elements wrong", what, bad, M*N)
	}
}

// TestSgemmEpilogueAccumulate: with accumulate the epilogue applies to
// C + A·B.
func TestSgemmEpilogueAccumulate(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	M, N, K := 37, 45, 410
	a, b := randFloats(r, M*K), randFloats(r, K*N)
	want, mag := naiveGemm(M, N, K, a, K, b, N)
	c := randFloats(r, M*N)
	c0 := append([]float32(nil), c...)
	bias := randFloats(r, N)
	SgemmPackedEpi(nil, M, a, K, PackB(b, N, K, N), c, N, true, nil, &Epilogue{Bias: bias, Relu: true})
	checkEpilogue(t, "acc", M, N, c, N, want, mag, func(i, j int) float64 {
		return math.Max(0, want[i*N+j]+float64(c0[i*N+j])+float64(bias[j]))
	}, 1)
}

func TestSgemmEpilogueBadBias(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a bias of 3 floats for N=5 did not panic")
		}
	}()
	SgemmPackedEpi(nil, 2, make([]float32, 4), 2, PackB(make([]float32, 10), 5, 2, 5), make([]float32, 10), 5, false, nil,
		&Epilogue{Bias: make([]float32, 3)})
}

// TestSgemmEpilogueNoAlloc: a fused call with caller-owned A scratch does
// not allocate, serial or pooled.
func TestSgemmEpilogueNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	pool := NewPool(2)
	defer pool.Close()
	r := rand.New(rand.NewPCG(9, 10))
	M, N, K := 128, 256, 256
	a, b, z := randFloats(r, M*K), randFloats(r, K*N), randFloats(r, M*N)
	bias := randFloats(r, N)
	pb := PackB(b, N, K, N)
	c, abuf := make([]float32, M*N), make([]float32, M*K)
	for _, p := range []*Pool{nil, pool} {
		SgemmPackedEpi(p, M, a, K, pb, c, N, false, abuf, &Epilogue{Bias: bias, Act: GeluErf})
		n := testing.AllocsPerRun(20, func() {
			SgemmPackedEpi(p, M, a, K, pb, c, N, false, abuf, &Epilogue{Bias: bias, Z: z, LDZ: N, Act: GeluErf})
		})
		if n != 0 {
			t.Fatalf("pool %v: %v allocations per call", p != nil, n)
		}
	}
}

// BenchmarkSgemmEpilogue compares the fused epilogue with the GEMM
// followed by a separate pass (the previous scheme), in one binary.
func BenchmarkSgemmEpilogue(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, sh := range [][3]int{{128, 1024, 256}, {128, 256, 1024}, {128, 768, 256}} {
		M, N, K := sh[0], sh[1], sh[2]
		a, bm := randFloats(r, M*K), randFloats(r, K*N)
		bias := randFloats(r, N)
		pb := PackB(bm, N, K, N)
		c, abuf := make([]float32, M*N), make([]float32, M*K)
		for _, act := range []struct {
			name string
			f    func([]float32)
		}{{"bias", nil}, {"bias+gelu", GeluErf}} {
			b.Run(fmt.Sprintf("%dx%dx%d/%s/fused", M, N, K, act.name), func(b *testing.B) {
				for range b.N {
					SgemmPackedEpi(nil, M, a, K, pb, c, N, false, abuf, &Epilogue{Bias: bias, Act: act.f})
				}
			})
			b.Run(fmt.Sprintf("%dx%dx%d/%s/separate", M, N, K, act.name), func(b *testing.B) {
				for range b.N {
					SgemmPackedBuf(nil, M, a, K, pb, c, N, false, abuf)
					for i := 0; i < M; i++ {
						row := c[i*N : (i+1)*N]
						ScaleAdd(row, 1, bias)
						if act.f != nil {
							act.f(row)
						}
					}
				}
			})
		}
	}
}
