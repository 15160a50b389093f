package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// qactCases are rows that exercise QuantizeActs' corner cases: all-zero
// and signed-zero blocks, exact halves after scaling (round half to even),
// denormals, wide ranges and ordinary random rows.
func qactCases() map[string][]float32 {
	r := rand.New(rand.NewPCG(7, 0))
	cases := map[string][]float32{}
	cases["random"] = randFloats(r, 768)
	wide := make([]float32, 4096)
	for i := range wide {
		wide[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(12)-6)))
	}
	cases["wide"] = wide
	zero := make([]float32, 96)
	zero[40] = float32(math.Copysign(0, -1))
	zero[70] = 3
	cases["zeros"] = zero
	// amax 127 gives inv 1: the halves round to even.
	ties := make([]float32, 64)
	for i := range ties {
		ties[i] = float32(i-32) + 0.5
	}
	ties[0], ties[63] = -127, 127
	cases["ties"] = ties
	den := make([]float32, 32)
	for i := range den {
		den[i] = float32(i-16) * 1e-42
	}
	cases["denormal"] = den
	return cases
}

// TestQuantActsMatchesScalar checks the SIMD activation quantization
// against the scalar loop bit for bit at every ISA level, with a leading
// dimension larger than K and several rows.
func TestQuantActsMatchesScalar(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		for name, row := range qactCases() {
			K := len(row)
			nb := K / qBlock
			qs, d, ns := make([]int8, K), make([]float32, nb), make([]int32, nb)
			quantActsGeneric(row, qs, d, ns)
			// Spot-check the scalar reference itself on one element.
			if name == "ties" {
				require.Equal(t, int8(-127), qs[0])
				require.Equal(t, int8(-30), qs[2]) // -29.5 → -30
				require.Equal(t, int8(-28), qs[3]) // -28.5 → -28
				require.Equal(t, float32(1), d[0])
			}
			// Three rows of the same data at ld K+32.
			ld := K + 32
			x := make([]float32, 2*ld+K)
			for m := 0; m < 3; m++ {
				copy(x[m*ld:], row)
			}
			var q QuantizedActs
			require.NoError(t, QuantizeActs(&q, x, ld, 3, K))
			for m := 0; m < 3; m++ {
				require.Equal(t, qs, q.qs[m*K:(m+1)*K], "%s row %d", name, m)
				for b := 0; b < nb; b++ {
					require.Equal(t, math.Float32bits(d[b]), math.Float32bits(q.d[m*nb+b]), "%s block %d", name, b)
				}
				require.Equal(t, ns, q.nsum[m*nb:(m+1)*nb], name)
			}
		}
	})
}

// BenchmarkQuantizeActs measures quantizing one 768-float decode row.
func BenchmarkQuantizeActs(b *testing.B) {
	x := randFloats(rand.New(rand.NewPCG(1, 0)), 768)
	var q QuantizedActs
	for i := 0; i < b.N; i++ {
		if err := QuantizeActs(&q, x, 768, 1, 768); err != nil {
			b.Fatal(err)
		}
	}
}
