//go:build !noasm

package kernels

import "github.com/weftrt/weft/ir"

//go:noescape
func dotQ4AVX2(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32

//go:noescape
func dotQ4VNNI(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32

//go:noescape
func dotQ8AVX2(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32

//go:noescape
func dotQ8AVX2rows(nr int, nb int, w *byte, rb int, qs *int8, d *float32, y *float32)

//go:noescape
func dotQ8AVX2x4rows(nr int, nb int, w *byte, rb int, qs *int8, d *float32, k int, y *float32, ldy int)

//go:noescape
func dotQ8VNNI(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32

//go:noescape
func dotQ4VNNIx4(nb int, w *byte, qs *int8, d *float32, nsum *int32, k int, out *float32)

//go:noescape
func dotQ8VNNIx4(nb int, w *byte, qs *int8, d *float32, nsum *int32, k int, out *float32)

// qDot4Func returns the four-activation-row dot product for the weight
// type and ISA level, or nil where there is none.
func qDot4Func(dt ir.DType, isa ISA) qDot4 {
	if isa < AVX512 || !hasVNNI {
		return nil
	}
	if dt == ir.Q4_0 {
		return q4VNNIx4
	}
	return q8VNNIx4
}

func q4VNNIx4(nb int, w []byte, qs []int8, d []float32, ns []int32, out *[4]float32) {
	_, _, _, _ = w[nb*18-1], qs[4*nb*qBlock-1], d[4*nb-1], ns[4*nb-1]
	dotQ4VNNIx4(nb, &w[0], &qs[0], &d[0], &ns[0], nb*qBlock, &out[0])
}

func q8VNNIx4(nb int, w []byte, qs []int8, d []float32, ns []int32, out *[4]float32) {
	_, _, _, _ = w[nb*34-1], qs[4*nb*qBlock-1], d[4*nb-1], ns[4*nb-1]
	dotQ8VNNIx4(nb, &w[0], &qs[0], &d[0], &ns[0], nb*qBlock, &out[0])
}

// The slice adapters of the assembly dot products. qJob.Task cuts the
// slices to exactly nb blocks; the index expressions check that.
func q4AVX2(nb int, w []byte, qs []int8, d []float32, s []int32) float32 {
	if nb == 0 {
		return 0
	}
	_, _, _, _ = w[nb*18-1], qs[nb*qBlock-1], d[nb-1], s[nb-1]
	return dotQ4AVX2(nb, &w[0], &qs[0], &d[0], &s[0])
}

func q4VNNI(nb int, w []byte, qs []int8, d []float32, s []int32) float32 {
	if nb == 0 {
		return 0
	}
	_, _, _, _ = w[nb*18-1], qs[nb*qBlock-1], d[nb-1], s[nb-1]
	return dotQ4VNNI(nb, &w[0], &qs[0], &d[0], &s[0])
}

func q8AVX2(nb int, w []byte, qs []int8, d []float32, s []int32) float32 {
	if nb == 0 {
		return 0
	}
	_, _, _ = w[nb*34-1], qs[nb*qBlock-1], d[nb-1]
	return dotQ8AVX2(nb, &w[0], &qs[0], &d[0], nil)
}

func q8VNNI(nb int, w []byte, qs []int8, d []float32, s []int32) float32 {
	if nb == 0 {
		return 0
	}
	_, _, _ = w[nb*34-1], qs[nb*qBlock-1], d[nb-1]
	return dotQ8VNNI(nb, &w[0], &qs[0], &d[0], nil)
}

// qDotFunc picks the row dot product for the weight type and ISA level.
func qDotFunc(dt ir.DType, isa ISA) qDot {
	vnni := isa >= AVX512 && hasVNNI
	switch {
	case isa < AVX2:
		if dt == ir.Q4_0 {
			return dotQ4Generic
		}
		return dotQ8Generic
	case dt == ir.Q4_0 && vnni:
		return q4VNNI
	case dt == ir.Q4_0:
		return q4AVX2
	case vnni:
		return q8VNNI
	}
	return q8AVX2
}

// qDotRowsFunc returns the many-weight-rows form of qDotFunc's kernel for
// the weight type and ISA level (the same sums bit for bit, with the
// decode GEMV's prefetch), or nil where there is none.
func qDotRowsFunc(dt ir.DType, isa ISA) qDotRows {
	if q8AVX2Plain(dt, isa) {
		return q8AVX2rows
	}
	return nil
}

// qDotRows4Func returns qDotRowsFunc's kernel for four activation rows at
// once (each row's sums bit for bit the one-row kernel's), or nil.
func qDotRows4Func(dt ir.DType, isa ISA) qDotRows4 {
	if q8AVX2Plain(dt, isa) {
		return q8AVX2x4rows
	}
	return nil
}

// q8AVX2Plain reports whether qDotFunc's kernel for dt at isa is dotQ8AVX2,
// the one the many-rows kernels reproduce.
func q8AVX2Plain(dt ir.DType, isa ISA) bool {
	return dt == ir.Q8_0 && isa >= AVX2 && !(isa >= AVX512 && hasVNNI)
}

func q8AVX2x4rows(nr, nb int, w []byte, rb int, qs []int8, d []float32, y []float32, ldy int) {
	if nr == 0 {
		return
	}
	if nb == 0 {
		for r := range 4 {
			clear(y[r*ldy : r*ldy+nr])
		}
		return
	}
	K := nb * qBlock
	_, _, _, _ = w[(nr-1)*rb+nb*34-1], qs[4*K-1], d[4*nb-1], y[3*ldy+nr-1]
	dotQ8AVX2x4rows(nr, nb, &w[0], rb, &qs[0], &d[0], K, &y[0], ldy)
}

func q8AVX2rows(nr, nb int, w []byte, rb int, qs []int8, d []float32, y []float32) {
	if nr == 0 {
		return
	}
	if nb == 0 {
		clear(y[:nr])
		return
	}
	_, _, _, _ = w[(nr-1)*rb+nb*34-1], qs[nb*qBlock-1], d[nb-1], y[nr-1]
	dotQ8AVX2rows(nr, nb, &w[0], rb, &qs[0], &d[0], &y[0])
}
