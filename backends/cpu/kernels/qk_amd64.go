//go:build amd64 && !noasm

package kernels

import "github.com/weftrt/weft/ir"

//go:noescape
func dotQ4K512(nsb int, w *byte, qs *int8, da *float32, sig *float32) float32

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
		return qkSpec{dot: q4K512, ordered: true}
	case dt == ir.Q4_K:
		return qkSpec{dot: dotQ4KGeneric}
	case vnni:
		return qkSpec{dot: q6K512}
	}
	return qkSpec{dot: dotQ6KGeneric}
}

func q4K512(nsb int, w []byte, qs []int8, da, sig []float32) float32 {
	if nsb == 0 {
		return 0
	}
	_, _, _, _ = w[nsb*144-1], qs[nsb*qkSuper-1], da[nsb*8-1], sig[nsb*8-1]
	return dotQ4K512(nsb, &w[0], &qs[0], &da[0], &sig[0])
}

func q6K512(nsb int, w []byte, qs []int8, d16, b16 []float32) float32 {
	if nsb == 0 {
		return 0
	}
	_, _, _, _ = w[nsb*210-1], qs[nsb*qkSuper-1], d16[nsb*16-1], b16[nsb*16-1]
	return dotQ6K512(nsb, &w[0], &qs[0], &d16[0], &b16[0])
}
