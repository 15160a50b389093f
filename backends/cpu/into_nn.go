package cpu

import (
	"math"

	"github.com/weftrt/weft/backends/cpu/kernels"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	registerInto(buildMatMul, "MatMul")
	registerInto(buildSoftmax, "Softmax")
	registerInto(buildLayerNorm, "LayerNormalization")
}

// buildMatMul handles float32 MatMul with numpy rules (1-D operands, batch
// broadcasting), accumulating in float32.
func buildMatMul(s *nodeSpec) intoKernel {
	a, b, y := s.input(0), s.input(1), s.out[0]
	if len(s.in) != 2 || len(s.out) != 1 || !a.ok || !b.ok || !allF32(a, b, y) || len(a.shape) == 0 || len(b.shape) == 0 {
		return nil
	}
	as, bs := a.shape, b.shape
	if len(as) == 1 {
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int64{bs[0], 1}
	}
	ra, rb := len(as), len(bs)
	M, K, N := int(as[ra-2]), int(as[ra-1]), int(bs[rb-1])
	if int(bs[rb-2]) != K {
		return nil
	}
	batch, err := ref.BroadcastShapes(as[:ra-2], bs[:rb-2])
	if err != nil {
		return nil
	}
	want := append([]int64{}, batch...)
	if len(a.shape) > 1 {
		want = append(want, int64(M))
	}
	if len(b.shape) > 1 {
		want = append(want, int64(N))
	}
	if !sameShape(want, y.shape) {
		return nil
	}
	nb := numel(batch)
	aOff, bOff := make([]int, nb), make([]int, nb)
	it := ref.NewIndexer(batch, ref.BroadcastStrides(as[:ra-2], batch), ref.BroadcastStrides(bs[:rb-2], batch))
	for i := 0; i < nb; i++ {
		aOff[i], bOff[i] = int(it.Offsets[0])*M*K, int(it.Offsets[1])*K*N
		it.Next()
	}
	return func(in, out []*ir.Tensor, scratch []byte) error {
		av, bv, yv := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
		for bi := range aOff {
			A, B := av[aOff[bi]:aOff[bi]+M*K], bv[bOff[bi]:bOff[bi]+K*N]
			for m := 0; m < M; m++ {
				gemvRow(yv[(bi*M+m)*N:(bi*M+m+1)*N], A[m*K:(m+1)*K], B, N)
			}
		}
		return nil
	}
}

// gemvRow computes row = a · B for one row a of A and B of shape
// [len(a), N]: four rows of B at a time, so each output element is loaded
// and stored once per four products.
func gemvRow(row, a, B []float32, N int) {
	clear(row)
	K := len(a)
	k := 0
	for ; k+4 <= K; k += 4 {
		a0, a1, a2, a3 := a[k], a[k+1], a[k+2], a[k+3]
		b0 := B[k*N : k*N+N]
		b1 := B[(k+1)*N : (k+1)*N+N]
		b2 := B[(k+2)*N : (k+2)*N+N]
		b3 := B[(k+3)*N : (k+3)*N+N]
		r := row[:N]
		for j := range r {
			r[j] += a0*b0[j] + a1*b1[j] + a2*b2[j] + a3*b3[j]
		}
	}
	for ; k < K; k++ {
		x, b := a[k], B[k*N:k*N+N]
		r := row[:N]
		for j := range r {
			r[j] += x * b[j]
		}
	}
}

// buildSoftmax handles float32 Softmax over one axis (or, with the
// importer's legacy_axis, over the flattened dims from axis on). Rows that
// are contiguous (the axis is the last) run the float32 vector kernels
// (kernels.Max, ExpSum, ScaleAdd: within a few float32 ulps of the
// reference); strided ones follow the reference, exp(x - max) / sum in
// float64, rounded once.
func buildSoftmax(s *nodeSpec) intoKernel {
	x, y := s.input(0), s.out[0]
	if len(s.in) != 1 || len(s.out) != 1 || !allF32(x, y) || !sameShape(x.shape, y.shape) {
		return nil
	}
	rank := len(x.shape)
	var outer, size, inner int
	if s.n.AttrInt("legacy_axis", 0) != 0 {
		a := s.n.AttrInt("axis", 1)
		if a < 0 {
			a += int64(rank)
		}
		if a < 0 || a > int64(rank) {
			return nil
		}
		outer, size, inner = numel(x.shape[:a]), numel(x.shape[a:]), 1
	} else {
		axis, ok := normAxis(s.n.AttrInt("axis", -1), rank)
		if !ok {
			return nil
		}
		outer, size, inner = numel(x.shape[:axis]), int(x.shape[axis]), numel(x.shape[axis+1:])
	}
	return func(in, out []*ir.Tensor, scratch []byte) error {
		xv, yv := in[0].Float32s(), out[0].Float32s()
		if inner == 1 && size > 0 {
			// Contiguous rows: the vector kernels, in float32.
			for o := 0; o < outer; o++ {
				row := yv[o*size : (o+1)*size]
				copy(row, xv[o*size:(o+1)*size])
				m := kernels.Max(row)
				kernels.ScaleAdd(row, 1/kernels.ExpSum(row, m), nil)
			}
			return nil
		}
		for o := 0; o < outer; o++ {
			for k := 0; k < inner; k++ {
				base := o*size*inner + k
				if size == 0 {
					continue
				}
				mx := float64(xv[base])
				for j := 1; j < size; j++ {
					if v := float64(xv[base+j*inner]); v > mx {
						mx = v
					}
				}
				sum := 0.0
				for j := 0; j < size; j++ {
					sum += math.Exp(float64(xv[base+j*inner]) - mx)
				}
				for j := 0; j < size; j++ {
					i := base + j*inner
					yv[i] = float32(math.Exp(float64(xv[i])-mx) / sum)
				}
			}
		}
		return nil
	}
}

// buildLayerNorm handles float32 LayerNormalization with only the Y output
// and Scale/B covering exactly the normalized dims. The row statistics
// (two passes: mean, then the mean squared deviation) and the affine step
// run the float32 vector kernels (kernels.Sum, SumSqDev, NormAffine); the
// reference keeps them in float64, which agrees to a few 1e-7 relative.
func buildLayerNorm(s *nodeSpec) intoKernel {
	x, sc, bias, y := s.input(0), s.input(1), s.input(2), s.out[0]
	if len(s.out) != 1 || !x.ok || !sc.ok || !allF32(x, sc, bias, y) || !sameShape(x.shape, y.shape) {
		return nil
	}
	if st := s.n.AttrInt("stash_type", 1); st != 1 {
		return nil
	}
	rank := len(x.shape)
	axis, ok := normAxis(s.n.AttrInt("axis", -1), rank)
	if !ok {
		return nil
	}
	norm := x.shape[axis:]
	if !coversTrailing(sc.shape, norm) || bias.ok && !coversTrailing(bias.shape, norm) {
		return nil
	}
	rows, cols := numel(x.shape[:axis]), numel(norm)
	eps := float64(s.n.AttrFloat("epsilon", 1e-5))
	hasBias := bias.ok
	return func(in, out []*ir.Tensor, scratch []byte) error {
		xv, sv, yv := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
		var bv []float32
		if hasBias {
			bv = in[2].Float32s()
		}
		if cols == 0 {
			return nil
		}
		for r := 0; r < rows; r++ {
			row := xv[r*cols : (r+1)*cols]
			mean := kernels.Sum(row) / float32(cols)
			variance := kernels.SumSqDev(row, mean) / float32(cols)
			inv := float32(1 / math.Sqrt(float64(variance)+eps))
			kernels.NormAffine(row, yv[r*cols:(r+1)*cols], sv[:cols], bv, mean, inv)
		}
		return nil
	}
}

// coversTrailing reports whether a parameter of shape p, broadcast against
// a tensor whose trailing dims are norm, has one element per position of
// norm (leading unit dims allowed).
func coversTrailing(p, norm []int64) bool {
	for len(p) > len(norm) {
		if p[0] != 1 {
			return false
		}
		p = p[1:]
	}
	off := len(norm) - len(p)
	for i := 0; i < off; i++ {
		if norm[i] != 1 {
			return false
		}
	}
	return sameShape(p, norm[off:])
}
