//go:build amd64 && !noasm

package kernels

import "github.com/weftrt/weft/ir"

//go:noescape
func dotQ4K512(nsb int, w *byte, qs *int8, da *float32, sig *float32) float32

//go:noescape
func dotQ4KAVX2(nsb int, w *byte, qs *int8, da *float32, sig *float32) float32

//go:noescape
func dotQ6KAVX2(nsb int, w *byte, qs *int8, d16 *float32, b16 *float32) float32

//go:noescape
func dotQ4K512x4(nsb int, w *byte, qs *int8, s1 *float32, s2 *float32, k int, ld int, out *float32)

//go:noescape
func dotQ6K512x4(nsb int, w *byte, qs *int8, s1 *float32, s2 *float32, k int, ld int, out *float32)

//go:noescape
func dotQ4K512rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, y *float32)

//go:noescape
func dotQ6K512rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, y *float32)

//go:noescape
func dotQ4KAVX2rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, y *float32)

//go:noescape
func dotQ6KAVX2rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, y *float32)

// qk2Idx is the VPERMPS order of dotQ6KAVX2's reduced sub-block sums.
var qk2Idx = [8]int32{0, 2, 4, 6, 1, 3, 5, 7}

//go:noescape
func dotQ6K512(nsb int, w *byte, qs *int8, d16 *float32, b16 *float32) float32

// qkIdx holds the VPERMPS indices that spread the per-sub-block scales of
// a super-block over the lanes of the integer dot products: [0:64) for
// Q4_K (vector i = 2p+h covers sub-blocks 4p+h and 4p+h+2, 8 lanes each),
// [64:128) for Q6_K (vector i covers sub-blocks 4i..4i+3, 4 lanes each).
var qkIdx = func() (t [128]int32) {
	for i := 0; i < 4; i++ {
		p, h := i/2, i%2
		for l := 0; l < 16; l++ {
			t[16*i+l] = int32(4*p + h + 2*(l/8))
			t[64+16*i+l] = int32(4*i + l/4)
		}
	}
	return t
}()

// qkFunc picks the K-quant row dot product for dt (Q4_K or Q6_K) at isa.
func qkFunc(dt ir.DType, isa ISA) qkSpec {
	vnni := isa >= AVX512 && hasVNNI
	switch {
	case dt == ir.Q4_K && vnni:
		return qkSpec{dot: q4K512, dot4: q4K512x4, rows: q4K512rows, rows4: q4K512x4rows, ordered: true}
	case dt == ir.Q4_K && isa >= AVX2:
		return qkSpec{dot: q4KAVX2, rows: q4KAVX2rows, rows4: q4KAVX2x4rows}
	case dt == ir.Q4_K:
		return qkSpec{dot: dotQ4KGeneric}
	case vnni:
		return qkSpec{dot: q6K512, dot4: q6K512x4, rows: q6K512rows, rows4: q6K512x4rows}
	case isa >= AVX2:
		return qkSpec{dot: q6KAVX2, rows: q6KAVX2rows, rows4: q6KAVX2x4rows}
	}
	return qkSpec{dot: dotQ6KGeneric}
}

func q4K512(nsb int, w []byte, qs []int8, da, sig []float32) float32 {
	if nsb == 0 {
		return 0
	}
	_, _ = w[nsb*144-1], qs[nsb*qkSuper-1]
	_ = da[nsb*16-1] // [da, σ] per super-block; sig unused
	return dotQ4K512(nsb, &w[0], &qs[0], &da[0], nil)
}

func q6K512(nsb int, w []byte, qs []int8, d16, b16 []float32) float32 {
	if nsb == 0 {
		return 0
	}
	_, _, _, _ = w[nsb*210-1], qs[nsb*qkSuper-1], d16[nsb*16-1], b16[nsb*16-1]
	return dotQ6K512(nsb, &w[0], &qs[0], &d16[0], &b16[0])
}

func q4KAVX2(nsb int, w []byte, qs []int8, da, sig []float32) float32 {
	if nsb == 0 {
		return 0
	}
	_, _, _, _ = w[nsb*144-1], qs[nsb*qkSuper-1], da[nsb*8-1], sig[nsb*8-1]
	return dotQ4KAVX2(nsb, &w[0], &qs[0], &da[0], &sig[0])
}

func q6KAVX2(nsb int, w []byte, qs []int8, d16, b16 []float32) float32 {
	if nsb == 0 {
		return 0
	}
	_, _, _, _ = w[nsb*210-1], qs[nsb*qkSuper-1], d16[nsb*16-1], b16[nsb*16-1]
	return dotQ6KAVX2(nsb, &w[0], &qs[0], &d16[0], &b16[0])
}

// q4K512x4 and q6K512x4 adapt the four-row kernels: rows of K codes and
// of ld floats in s1 and s2.
func q4K512x4(nsb int, w []byte, qs []int8, s1, s2 []float32, K, ld int) (out [4]float32) {
	_, _, _, _ = w[nsb*144-1], qs[3*K+nsb*qkSuper-1], s1[3*ld+nsb*16-1], s2[3*ld+nsb*16-1]
	dotQ4K512x4(nsb, &w[0], &qs[0], &s1[0], &s2[0], K, 4*ld, &out[0])
	return out
}

func q6K512x4(nsb int, w []byte, qs []int8, s1, s2 []float32, K, ld int) (out [4]float32) {
	_, _, _, _ = w[nsb*210-1], qs[3*K+nsb*qkSuper-1], s1[3*ld+nsb*16-1], s2[3*ld+nsb*16-1]
	dotQ6K512x4(nsb, &w[0], &qs[0], &s1[0], &s2[0], K, 4*ld, &out[0])
	return out
}

//go:noescape
func dotQ4K512x4rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, k int, ld int, y *float32, ldy int)

//go:noescape
func dotQ6K512x4rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, k int, ld int, y *float32, ldy int)

// kx4Rows adapts a many-weight-rows four-row kernel whose weight rows take
// sb bytes a super-block: it checks the operands' extents.
func kx4Rows(sb int, k func(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, K int, ld int, y *float32, ldy int)) qkRows4 {
	return func(nr, nsb int, w []byte, rb int, qs []int8, s1, s2 []float32, K, ld int, y []float32, ldy int) {
		_, _, _, _, _ = w[(nr-1)*rb+nsb*sb-1], qs[3*K+nsb*qkSuper-1], s1[3*ld+nsb*16-1], s2[3*ld+nsb*16-1], y[3*ldy+nr-1]
		k(nr, nsb, &w[0], rb, &qs[0], &s1[0], &s2[0], K, 4*ld, &y[0], ldy)
	}
}

// q4K512x4rows and q6K512x4rows are q4K512x4 and q6K512x4 over many
// weight rows.
var (
	q4K512x4rows = kx4Rows(144, dotQ4K512x4rows)
	q6K512x4rows = kx4Rows(210, dotQ6K512x4rows)
)

// q4K512rows and q6K512rows adapt the many-weight-rows kernels (nr rows,
// rb bytes apart, against one activation row).
func q4K512rows(nr, nsb int, w []byte, rb int, qs []int8, s1, s2 []float32, y []float32) {
	_, _, _, _ = w[(nr-1)*rb+nsb*144-1], qs[nsb*qkSuper-1], s1[nsb*16-1], y[nr-1]
	dotQ4K512rows(nr, nsb, &w[0], rb, &qs[0], &s1[0], nil, &y[0])
}

func q6K512rows(nr, nsb int, w []byte, rb int, qs []int8, s1, s2 []float32, y []float32) {
	_, _, _, _, _ = w[(nr-1)*rb+nsb*210-1], qs[nsb*qkSuper-1], s1[nsb*16-1], s2[nsb*16-1], y[nr-1]
	dotQ6K512rows(nr, nsb, &w[0], rb, &qs[0], &s1[0], &s2[0], &y[0])
}

func q4KAVX2rows(nr, nsb int, w []byte, rb int, qs []int8, s1, s2 []float32, y []float32) {
	_, _, _, _, _ = w[(nr-1)*rb+nsb*144-1], qs[nsb*qkSuper-1], s1[nsb*8-1], s2[nsb*8-1], y[nr-1]
	dotQ4KAVX2rows(nr, nsb, &w[0], rb, &qs[0], &s1[0], &s2[0], &y[0])
}

//go:noescape
func dotQ4KAVX2x4rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, k int, ld int, y *float32, ldy int)

func q4KAVX2x4rows(nr, nsb int, w []byte, rb int, qs []int8, s1, s2 []float32, K, ld int, y []float32, ldy int) {
	_, _, _, _, _ = w[(nr-1)*rb+nsb*144-1], qs[3*K+nsb*qkSuper-1], s1[3*ld+nsb*8-1], s2[3*ld+nsb*8-1], y[3*ldy+nr-1]
	dotQ4KAVX2x4rows(nr, nsb, &w[0], rb, &qs[0], &s1[0], &s2[0], K, ld, &y[0], ldy)
}

//go:noescape
func dotQ6KAVX2x4rows(nr int, nsb int, w *byte, rb int, qs *int8, s1 *float32, s2 *float32, k int, ld int, y *float32, ldy int)

func q6KAVX2x4rows(nr, nsb int, w []byte, rb int, qs []int8, s1, s2 []float32, K, ld int, y []float32, ldy int) {
	_, _, _, _, _ = w[(nr-1)*rb+nsb*210-1], qs[3*K+nsb*qkSuper-1], s1[3*ld+nsb*16-1], s2[3*ld+nsb*16-1], y[3*ldy+nr-1]
	dotQ6KAVX2x4rows(nr, nsb, &w[0], rb, &qs[0], &s1[0], &s2[0], K, ld, &y[0], ldy)
}

func q6KAVX2rows(nr, nsb int, w []byte, rb int, qs []int8, s1, s2 []float32, y []float32) {
	_, _, _, _, _ = w[(nr-1)*rb+nsb*210-1], qs[nsb*qkSuper-1], s1[nsb*16-1], s2[nsb*16-1], y[nr-1]
	dotQ6KAVX2rows(nr, nsb, &w[0], rb, &qs[0], &s1[0], &s2[0], &y[0])
}
