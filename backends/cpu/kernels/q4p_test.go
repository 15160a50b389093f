package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// TestPackQ4RowsRoundTrip: packing then unpacking gives the GGUF rows
// back, for row lengths with and without a short group.
func TestPackQ4RowsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, K := range []int{32, 96, 512, 544, 768, 896, 4864} {
		w, _ := randQWeights(r, ir.Q4_0, 5, K)
		p, err := PackQ4Rows(w, 5, K)
		if err != nil {
			t.Fatal(err)
		}
		u, err := UnpackQ4Rows(p, 5, K)
		if err != nil {
			t.Fatal(err)
		}
		if string(u) != string(w) {
			t.Fatalf("K=%d: unpack(pack(w)) != w", K)
		}
	}
	if _, err := PackQ4Rows(make([]byte, 10), 1, 64); err == nil {
		t.Fatal("PackQ4Rows accepted 10 bytes for 1×64")
	}
	if _, err := PackQ4Rows(nil, 1, 33); err == nil {
		t.Fatal("PackQ4Rows accepted K=33")
	}
}

// TestQMatMulPacked checks the packed Q4_0 and Q8_0 kernels against the
// plain Go row dot product on the GGUF layout (dotQ4Generic,
// dotQ8Generic) for random shapes: blocks per row with and without a
// short group (1..40, 152), and activation rows M = 1..11 (the eight-,
// four- and one-row kernels and their mixes). Every sum must also equal
// the one QRows computes for that activation row alone (one summation
// order for any M), with the other prefetch mode (which changes no
// result). It runs at every ISA level that has packed kernels (Q4_0:
// AVX2 and AVX-512 with VNNI; Q8_0: AVX-512 with VNNI).
func TestQMatMulPacked(t *testing.T) {
	for _, dt := range []ir.DType{ir.Q4_0, ir.Q8_0} {
		t.Run(dt.String(), func(t *testing.T) {
			ran := false
			forEachISA(t, func(t *testing.T) {
				if !PackedSupported(dt) {
					t.Skipf("no packed %v kernels at %v", dt, CurrentISA())
				}
				ran = true
				testQMatMulPacked(t, dt)
			})
			if !ran {
				t.Skipf("the packed %v kernels do not run on this CPU", dt)
			}
		})
	}
}

func testQMatMulPacked(t *testing.T, dt ir.DType) {
	r := rand.New(rand.NewPCG(5, 6))
	pool := NewPool(3)
	defer pool.Close()
	ref, bb := dotQ4Generic, 18
	if dt == ir.Q8_0 {
		ref, bb = dotQ8Generic, 34
	}
	nbs := []int{1, 2, 3, 7, 8, 15, 16, 17, 24, 28, 31, 32, 33, 40, 152}
	for _, nb := range nbs {
		for _, M := range []int{1, 2, 3, 4, 5, 8, 9, 11} {
			K := nb * qBlock
			N := 1 + r.IntN(37)
			t.Run(fmt.Sprintf("nb%d/M%d/N%d", nb, M, N), func(t *testing.T) {
				w, _ := randQWeights(r, dt, N, K)
				p := make([]byte, len(w))
				if err := PackRowsTo(dt, p, w, N, K); err != nil {
					t.Fatal(err)
				}
				x := randFloats(r, M*K)
				var q QuantizedActs
				if err := QuantizeActs(&q, x, K, M, K); err != nil {
					t.Fatal(err)
				}
				ldy := N + 3
				y := make([]float32, M*ldy)
				for i := range y {
					y[i] = float32(math.NaN())
				}
				pf := Prefetch((nb + M) % 2)
				if err := QMatMulPacked(pool, dt, p, N, &q, y, ldy, pf); err != nil {
					t.Fatal(err)
				}
				for m := 0; m < M; m++ {
					// The same activation row alone.
					var q1 QuantizedActs
					if err := QuantizeActs(&q1, x[m*K:(m+1)*K], K, 1, K); err != nil {
						t.Fatal(err)
					}
					var rows QRows
					if !rows.InitPacked(dt, &q1) {
						t.Fatal("InitPacked declined one row")
					}
					rows.SetPrefetch(PrefetchStream - pf)
					y1 := make([]float32, N)
					if err := rows.Run(p, N, y1); err != nil {
						t.Fatal(err)
					}
					for n := 0; n < N; n++ {
						want := ref(nb, w[n*nb*bb:(n+1)*nb*bb], q.qs[m*K:(m+1)*K], q.d[m*nb:(m+1)*nb], q.nsum[m*nb:(m+1)*nb])
						got := y[m*ldy+n]
						if d := math.Abs(float64(got - want)); d > 1e-4*(1+math.Abs(float64(want))) || math.IsNaN(float64(got)) {
							t.Fatalf("y[%d,%d] = %g, plain row dot %g", m, n, got, want)
						}
						if math.Float32bits(got) != math.Float32bits(y1[n]) {
							t.Fatalf("y[%d,%d] = %g at M=%d but %g alone", m, n, got, M, y1[n])
						}
					}
					for n := N; n < ldy && m < M-1; n++ {
						if !math.IsNaN(float64(y[m*ldy+n])) {
							t.Fatalf("y[%d,%d] past N written", m, n)
						}
					}
				}
			})
		}
	}
}

// TestPackQ8RowsRoundTrip: packing then unpacking gives the GGUF rows
// back, for row lengths with and without a short group; the packed codes
// are the GGUF ones plus 128 in lane order.
func TestPackQ8RowsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, K := range []int{32, 96, 512, 544, 768, 896, 4864} {
		w, _ := randQWeights(r, ir.Q8_0, 5, K)
		p := make([]byte, len(w))
		require.NoError(t, PackRowsTo(ir.Q8_0, p, w, 5, K))
		u := make([]byte, len(w))
		require.NoError(t, UnpackRowsTo(ir.Q8_0, u, p, 5, K))
		require.Equal(t, w, u, "K=%d", K)
		// Block 1 of row 0 (K >= 64): its scale, then code 4j+i of it in
		// byte i of lane 1 of chunk j, plus 128.
		if K >= 64 {
			t0 := min(16, K/32)
			require.Equal(t, w[34:36], p[2:4])
			for j := 0; j < 8; j++ {
				for i := 0; i < 4; i++ {
					require.Equal(t, w[34+2+4*j+i]^0x80, p[2*t0+4*t0*j+4+i], "K=%d j=%d i=%d", K, j, i)
				}
			}
		}
	}
	require.Error(t, PackRowsTo(ir.Q8_0, make([]byte, 10), make([]byte, 34), 1, 64))
	require.Error(t, PackRowsTo(ir.Q8_0, nil, nil, 1, 33))
	require.ErrorIs(t, PackRowsTo(ir.Q4_K, nil, nil, 0, 256), ir.ErrUnsupported)
}

// BenchmarkPackQ4Rows times the repacking of a 2048×768 weight (a
// compile-time cost of the packed kernels), in bytes per second.
func BenchmarkPackQ4Rows(b *testing.B) {
	const N, K = 2048, 768
	w, _ := randQWeights(rand.New(rand.NewPCG(1, 2)), ir.Q4_0, N, K)
	dst := make([]byte, len(w))
	b.SetBytes(int64(len(w)))
	for b.Loop() {
		if err := PackQ4RowsTo(dst, w, N, K); err != nil {
			b.Fatal(err)
		}
	}
}

// TestQ4PackedActs compares the activation records q4pActsRow builds (the
// AVX-512 gathers where the CPU has them) with q4pActsGo's, byte for byte,
// for block counts with and without a short group, into a buffer of
// garbage (every byte must be written).
func TestQ4PackedActs(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, nb := range []int{1, 2, 7, 15, 16, 17, 28, 31, 32, 33, 64, 152, 200} {
		K := nb * qBlock
		x := make([]float32, 3*K)
		for i := range x {
			x[i] = r.Float32()*8 - 4
		}
		var q QuantizedActs
		require.NoError(t, QuantizeActs(&q, x, K, 3, K))
		ng := (nb + q4pGroup - 1) / q4pGroup
		for m := 0; m < 3; m++ {
			want := make([]byte, ng*q4pRec)
			q4pActsGo(q.qs[m*K:(m+1)*K], q.d[m*nb:(m+1)*nb], q.nsum[m*nb:(m+1)*nb], want)
			got := make([]byte, ng*q4pRec)
			for i := range got {
				got[i] = 0xA5
			}
			q4pActsRow(q.qs[m*K:(m+1)*K], q.d[m*nb:(m+1)*nb], q.nsum[m*nb:(m+1)*nb], got)
			require.Equal(t, want, got, "nb %d row %d", nb, m)
		}
	}
}
