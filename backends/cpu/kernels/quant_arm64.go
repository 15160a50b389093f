//go:build !noasm

package kernels

import "github.com/weftrt/weft/ir"

// The NEON (SMULL/SMLAL2/SADALP) and SDOT row dot products, written by
// gen_neon_arm64.go into quant_neon_arm64.s. The Q4_0 kernels subtract the
// offset 8 from the nibbles and ignore nsum; the Q8_0 kernels rely on
// activations in [-127, 127] (QuantizeActs clamps them).

//go:noescape
func dotQ8NEON(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32

//go:noescape
func dotQ4NEON(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32

//go:noescape
func dotQ8SDOT(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32

//go:noescape
func dotQ4SDOT(nb int, w *byte, qs *int8, d *float32, nsum *int32) float32

//go:noescape
func dotQ8NEONx4(nb int, w *byte, qs *int8, d *float32, nsum *int32, k int, out *float32)

//go:noescape
func dotQ4NEONx4(nb int, w *byte, qs *int8, d *float32, nsum *int32, k int, out *float32)

//go:noescape
func dotQ8SDOTx4(nb int, w *byte, qs *int8, d *float32, nsum *int32, k int, out *float32)

//go:noescape
func dotQ4SDOTx4(nb int, w *byte, qs *int8, d *float32, nsum *int32, k int, out *float32)

// qDotFunc picks the row dot product for the weight type and ISA level.
func qDotFunc(dt ir.DType, isa ISA) qDot {
	q4 := dt == ir.Q4_0
	switch {
	case isa >= DotProd && q4:
		return q4SDOT
	case isa >= DotProd:
		return q8SDOT
	case isa >= NEON && q4:
		return q4NEON
	case isa >= NEON:
		return q8NEON
	case q4:
		return dotQ4Generic
	}
	return dotQ8Generic
}

// qDot4Func returns the four-activation-row dot product for the weight
// type and ISA level, or nil where there is none.
func qDot4Func(dt ir.DType, isa ISA) qDot4 {
	q4 := dt == ir.Q4_0
	switch {
	case isa >= DotProd && q4:
		return q4SDOTx4
	case isa >= DotProd:
		return q8SDOTx4
	case isa >= NEON && q4:
		return q4NEONx4
	case isa >= NEON:
		return q8NEONx4
	}
	return nil
}

// The slice adapters. qJob.Task cuts the slices to exactly nb blocks (four
// rows of them for the x4 kernels); the index expressions check that
// before the assembly reads.

func q8NEON(nb int, w []byte, qs []int8, d []float32, _ []int32) float32 {
	if nb == 0 {
		return 0
	}
	_, _, _ = w[nb*34-1], qs[nb*qBlock-1], d[nb-1]
	return dotQ8NEON(nb, &w[0], &qs[0], &d[0], nil)
}

func q4NEON(nb int, w []byte, qs []int8, d []float32, _ []int32) float32 {
	if nb == 0 {
		return 0
	}
	_, _, _ = w[nb*18-1], qs[nb*qBlock-1], d[nb-1]
	return dotQ4NEON(nb, &w[0], &qs[0], &d[0], nil)
}

func q8SDOT(nb int, w []byte, qs []int8, d []float32, _ []int32) float32 {
	if nb == 0 {
		return 0
	}
	_, _, _ = w[nb*34-1], qs[nb*qBlock-1], d[nb-1]
	return dotQ8SDOT(nb, &w[0], &qs[0], &d[0], nil)
}

func q4SDOT(nb int, w []byte, qs []int8, d []float32, _ []int32) float32 {
	if nb == 0 {
		return 0
	}
	_, _, _ = w[nb*18-1], qs[nb*qBlock-1], d[nb-1]
	return dotQ4SDOT(nb, &w[0], &qs[0], &d[0], nil)
}

func q8NEONx4(nb int, w []byte, qs []int8, d []float32, _ []int32, out *[4]float32) {
	_, _, _ = w[nb*34-1], qs[4*nb*qBlock-1], d[4*nb-1]
	dotQ8NEONx4(nb, &w[0], &qs[0], &d[0], nil, nb*qBlock, &out[0])
}

func q4NEONx4(nb int, w []byte, qs []int8, d []float32, _ []int32, out *[4]float32) {
	_, _, _ = w[nb*18-1], qs[4*nb*qBlock-1], d[4*nb-1]
	dotQ4NEONx4(nb, &w[0], &qs[0], &d[0], nil, nb*qBlock, &out[0])
}

func q8SDOTx4(nb int, w []byte, qs []int8, d []float32, _ []int32, out *[4]float32) {
	_, _, _ = w[nb*34-1], qs[4*nb*qBlock-1], d[4*nb-1]
	dotQ8SDOTx4(nb, &w[0], &qs[0], &d[0], nil, nb*qBlock, &out[0])
}

func q4SDOTx4(nb int, w []byte, qs []int8, d []float32, _ []int32, out *[4]float32) {
	_, _, _ = w[nb*18-1], qs[4*nb*qBlock-1], d[4*nb-1]
	dotQ4SDOTx4(nb, &w[0], &qs[0], &d[0], nil, nb*qBlock, &out[0])
}
