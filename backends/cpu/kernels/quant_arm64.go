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

// The SMMLA kernels: two weight rows (w, w+rb) times four activation rows
// (row r at qs + r·k, scales at d + r·nb), out[2r+c] = row r · weight row c.

//go:noescape
func dotQ8MMLA(nb int, w *byte, rb int, qs *int8, d *float32, k int, out *float32)

//go:noescape
func dotQ4MMLA(nb int, w *byte, rb int, qs *int8, d *float32, k int, out *float32)

func init() { qPairFunc = qPairI8MM }

// qPairI8MM returns the two-weight-row body at the I8MM level.
func qPairI8MM(dt ir.DType, isa ISA) func(j *qJob, n int) {
	switch {
	case isa < I8MM:
		return nil
	case dt == ir.Q4_0:
		return pairQ4MMLA
	case dt == ir.Q8_0:
		return pairQ8MMLA
	}
	return nil
}

func pairQ8MMLA(j *qJob, n int) { pairMMLA(j, n, false) }
func pairQ4MMLA(j *qJob, n int) { pairMMLA(j, n, true) }

// pairMMLA fills output columns n and n+1: four activation rows at a time
// with SMMLA, the remaining rows with the job's row dot product.
func pairMMLA(j *qJob, n int, q4 bool) {
	x := j.x
	nb := x.K / qBlock
	w := j.w[n*j.rb : (n+2)*j.rb]
	var out [8]float32
	m := 0
	for ; m+4 <= x.M; m += 4 {
		qs, d := x.qs[m*x.K:(m+4)*x.K], x.d[m*nb:(m+4)*nb]
		_, _, _ = w[2*j.rb-1], qs[4*nb*qBlock-1], d[4*nb-1]
		if q4 {
			dotQ4MMLA(nb, &w[0], j.rb, &qs[0], &d[0], x.K, &out[0])
		} else {
			dotQ8MMLA(nb, &w[0], j.rb, &qs[0], &d[0], x.K, &out[0])
		}
		for r := 0; r < 4; r++ {
			j.y[(m+r)*j.ldy+n] = out[2*r]
			j.y[(m+r)*j.ldy+n+1] = out[2*r+1]
		}
	}
	for ; m < x.M; m++ {
		j.y[m*j.ldy+n] = j.rowDot(m, nb, w[:j.rb])
		j.y[m*j.ldy+n+1] = j.rowDot(m, nb, w[j.rb:])
	}
}

// qDotRowsFunc returns the many-weight-rows form of qDotFunc's kernel:
// none here.
func qDotRowsFunc(ir.DType, ISA) qDotRows { return nil }

// qDotRows4Func returns the four-activation-row form of qDotRowsFunc's
// kernel: none here.
func qDotRows4Func(ir.DType, ISA) qDotRows4 { return nil }
