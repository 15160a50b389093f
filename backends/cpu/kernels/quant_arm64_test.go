//go:build !noasm

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// TestNEONDotKernels checks every arm64 dot-product kernel the machine can
// run against the generic Go ones, block by block count, for one and four
// activation rows.
func TestNEONDotKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, isa := range Levels() {
		if isa == Generic {
			continue
		}
		for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0} {
			gen := qDotFunc(dt, Generic)
			dot, dot4 := qDotFunc(dt, isa), qDot4Func(dt, isa)
			for _, nb := range []int{1, 2, 3, 7, 16} {
				t.Run(fmt.Sprintf("%v/%v/nb%d", isa, dt, nb), func(t *testing.T) {
					K := nb * qBlock
					w, _ := randQWeights(r, dt, 1, K)
					x := randFloats(r, 4*K)
					var qa QuantizedActs
					if err := QuantizeActs(&qa, x, K, 4, K); err != nil {
						t.Fatal(err)
					}
					var want [4]float32
					for m := range 4 {
						args := func() (int, []byte, []int8, []float32, []int32) {
							return nb, w, qa.qs[m*K : (m+1)*K], qa.d[m*nb : (m+1)*nb], qa.nsum[m*nb : (m+1)*nb]
						}
						want[m] = gen(args())
						if got := dot(args()); !close32(got, want[m]) {
							t.Errorf("row %d: %v = %g, generic %g", m, isa, got, want[m])
						}
					}
					var out [4]float32
					dot4(nb, w, qa.qs, qa.d, qa.nsum, &out)
					for m := range 4 {
						if !close32(out[m], want[m]) {
							t.Errorf("x4 row %d: %v = %g, generic %g", m, isa, out[m], want[m])
						}
					}
				})
			}
		}
	}
}

func close32(a, b float32) bool {
	return math.Abs(float64(a-b)) <= 1e-4*(math.Abs(float64(b))+1)
}

// TestMMLAKernels checks the SMMLA two-weight-row kernels against the
// generic row dot product, for each of the 2×4 outputs.
func TestMMLAKernels(t *testing.T) {
	if BestISA() < I8MM {
		t.Skip("no I8MM")
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0} {
		gen := qDotFunc(dt, Generic)
		for _, nb := range []int{1, 2, 3, 7, 16} {
			t.Run(fmt.Sprintf("%v/nb%d", dt, nb), func(t *testing.T) {
				K := nb * qBlock
				w, _ := randQWeights(r, dt, 2, K)
				rb := len(w) / 2
				x := randFloats(r, 4*K)
				var qa QuantizedActs
				if err := QuantizeActs(&qa, x, K, 4, K); err != nil {
					t.Fatal(err)
				}
				var out [8]float32
				if dt == ir.Q4_0 {
					dotQ4MMLA(nb, &w[0], rb, &qa.qs[0], &qa.d[0], K, &out[0])
				} else {
					dotQ8MMLA(nb, &w[0], rb, &qa.qs[0], &qa.d[0], K, &out[0])
				}
				for m := range 4 {
					for c := range 2 {
						want := gen(nb, w[c*rb:(c+1)*rb], qa.qs[m*K:(m+1)*K], qa.d[m*nb:(m+1)*nb], qa.nsum[m*nb:(m+1)*nb])
						if got := out[2*m+c]; !close32(got, want) {
							t.Errorf("row %d × weight row %d = %g, generic %g", m, c, got, want)
						}
					}
				}
			})
		}
	}
}
