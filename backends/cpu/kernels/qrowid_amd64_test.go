//go:build amd64 && !noasm

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrt/weft/ir"
)

// Without VBMI, AVX-512 QMatMul takes the plain (dot, dot4) kernels
// instead of the grouped ones: the row identity test runs both.
func init() {
	qRowIdentityVariants = append(qRowIdentityVariants, func(f func()) {
		old := hasVBMI
		hasVBMI = false
		defer func() { hasVBMI = old }()
		f()
	})
}

// TestQ4G512RowsVsOne checks the decode rows kernel (four rows at a time,
// then one) against the one-row kernel, bitwise, for every row count up
// to 9 and 1 to 7 groups per row (the loop, the two-group and one-group
// tails), with the weight rows further apart than they are long.
func TestQ4G512RowsVsOne(t *testing.T) {
	if BestISA() < AVX512 || !hasVNNI || !hasVBMI {
		t.Skip("no AVX-512 VNNI/VBMI")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for ng := 1; ng <= 7; ng++ {
		K := ng * 128
		var qa QuantizedActs
		if err := QuantizeActs(&qa, randFloats(r, K), K, 1, K); err != nil {
			t.Fatal(err)
		}
		lay := qa.qGroups(qLayInterleaved)
		for nr := 1; nr <= 9; nr++ {
			rb := ng*72 + 18*r.IntN(3) // stride ≥ the row's bytes
			w, _ := randQWeights(r, ir.Q4_0, nr*rb/18, 32)
			y := make([]float32, nr)
			q4G512rows(nr, ng, w, rb, lay, y, PrefetchKeep)
			for i := 0; i < nr; i++ {
				want := q4G512(ng, w[i*rb:i*rb+ng*72], lay)
				if math.Float32bits(y[i]) != math.Float32bits(want) {
					t.Fatalf("ng %d, %d rows (stride %d): row %d = %v, one-row kernel %v", ng, nr, rb, i, y[i], want)
				}
			}
		}
	}
}
