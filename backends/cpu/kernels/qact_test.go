package kernels

import (
	"fmt"
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

// TestQGroupsLayout checks every group layout byte for byte against the
// layouts' definitions (see qLayout), written out element by element, on
// rows with partial groups.
func TestQGroupsLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 0))
	for _, K := range []int{32, 64, 96, 128, 160, 768, 800} {
		for _, M := range []int{1, 3} {
			var q QuantizedActs
			require.NoError(t, QuantizeActs(&q, randFloats(r, M*K), K, M, K))
			nb := K / qBlock
			for _, l := range []qLayout{qLayLanes, qLayInterleaved, qLayQ8} {
				gb, rec := l.blocks(), l.bytes()
				ng := nb / gb
				got := q.qGroups(l)
				if ng == 0 {
					continue
				}
				want := make([]byte, M*ng*rec)
				put := func(at int, v uint32) {
					want[at], want[at+1], want[at+2], want[at+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
				}
				for m := 0; m < M; m++ {
					for g := 0; g < ng; g++ {
						base := (m*ng + g) * rec
						for i := 0; i < gb; i++ {
							b := m*nb + g*gb + i
							a := q.qs[b*qBlock : (b+1)*qBlock]
							db := math.Float32bits(q.d[b])
							for e := 0; e < 32; e++ {
								switch l {
								case qLayLanes: // block i in 128-bit lane i
									want[base+64*(e/16)+16*i+e%16] = byte(a[e])
								case qLayInterleaved: // dword 4·(e%16/4)+i, halves 64 apart
									want[base+64*(e/16)+4*(4*(e%16/4)+i)+e%4] = byte(a[e])
								case qLayQ8: // dword 2·(e/4)+i
									want[base+4*(2*(e/4)+i)+e%4] = byte(a[e])
								}
							}
							switch l {
							case qLayLanes:
								for e := 0; e < 4; e++ {
									put(base+128+16*i+4*e, db)
									put(base+192+16*i+4*e, uint32(2*q.nsum[b]))
								}
							case qLayInterleaved:
								put(base+128+4*i, db)
								put(base+144+4*i, uint32(2*q.nsum[b]))
							case qLayQ8:
								put(base+64+4*i, db)
								put(base+72+4*i, uint32(16*q.nsum[b]))
							}
						}
					}
				}
				require.Equal(t, want, got[:M*ng*rec], "K=%d M=%d layout %d", K, M, l)
			}
		}
	}
}

// BenchmarkQGroups measures building a decode row's group layouts
// (K=2048) after QuantizeActs.
func BenchmarkQGroups(b *testing.B) {
	x := randFloats(rand.New(rand.NewPCG(1, 0)), 2048)
	var q QuantizedActs
	if err := QuantizeActs(&q, x, 2048, 1, 2048); err != nil {
		b.Fatal(err)
	}
	for _, l := range []qLayout{qLayLanes, qLayInterleaved, qLayQ8} {
		b.Run(fmt.Sprint(l), func(b *testing.B) {
			for b.Loop() {
				q.g4ok = 0
				q.qGroups(l)
			}
		})
	}
}
