package nn

import (
	"fmt"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("MatMul", matMul)
	ref.Register("Gemm", gemm)
	ref.Register("MatMulInteger", matMulInteger)
	ref.Register("QLinearMatMul", qlinearMatMul)
}

// mmPlan is a resolved numpy-style matmul: a batch of M×K by K×N products.
// aOff[i] and bOff[i] are the element offsets of the A and B matrices used
// by output batch i (broadcasting repeats offsets).
type mmPlan struct {
	M, K, N    int
	aOff, bOff []int
	out        []int64 // output shape (1-D operands' unit dims removed)
}

// planMatMul applies numpy matmul shape rules: a 1-D A is a row vector, a
// 1-D B a column vector (their unit dim is dropped from the result), and
// the leading batch dims broadcast.
func planMatMul(a, b []int64) (*mmPlan, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, fmt.Errorf("MatMul operands must have rank >= 1, got shapes %v and %v", a, b)
	}
	as, bs := a, b
	if len(a) == 1 {
		as = []int64{1, a[0]}
	}
	if len(b) == 1 {
		bs = []int64{b[0], 1}
	}
	ra, rb := len(as), len(bs)
	M, K, K2, N := as[ra-2], as[ra-1], bs[rb-2], bs[rb-1]
	if K != K2 {
		return nil, fmt.Errorf("MatMul inner dims differ: shapes %v and %v", a, b)
	}
	batch, err := ref.BroadcastShapes(as[:ra-2], bs[:rb-2])
	if err != nil {
		return nil, fmt.Errorf("MatMul batch dims: %w", err)
	}
	p := &mmPlan{M: int(M), K: int(K), N: int(N)}
	p.out = append(p.out, batch...)
	if len(a) > 1 {
		p.out = append(p.out, M)
	}
	if len(b) > 1 {
		p.out = append(p.out, N)
	}
	nb := int(ir.NumElements(batch))
	it := ref.NewIndexer(batch, ref.BroadcastStrides(as[:ra-2], batch), ref.BroadcastStrides(bs[:rb-2], batch))
	for i := 0; i < nb; i++ {
		p.aOff = append(p.aOff, int(it.Offsets[0])*p.M*p.K)
		p.bOff = append(p.bOff, int(it.Offsets[1])*p.K*p.N)
		it.Next()
	}
	return p, nil
}

// floats runs the plan on float64 data; each output is a sum over k in
// increasing order.
func (p *mmPlan) floats(a, b []float64) []float64 {
	M, K, N := p.M, p.K, p.N
	out := make([]float64, len(p.aOff)*M*N)
	for bi := range p.aOff {
		ao, bo := p.aOff[bi], p.bOff[bi]
		for m := 0; m < M; m++ {
			orow := out[(bi*M+m)*N : (bi*M+m+1)*N]
			for k := 0; k < K; k++ {
				av := a[ao+m*K+k]
				brow := b[bo+k*N : bo+(k+1)*N]
				for n, bv := range brow {
					orow[n] += av * bv
				}
			}
		}
	}
	return out
}

// ints runs the plan on int64 data (wrapping on overflow).
func (p *mmPlan) ints(a, b []int64) []int64 {
	M, K, N := p.M, p.K, p.N
	out := make([]int64, len(p.aOff)*M*N)
	for bi := range p.aOff {
		ao, bo := p.aOff[bi], p.bOff[bi]
		for m := 0; m < M; m++ {
			orow := out[(bi*M+m)*N : (bi*M+m+1)*N]
			for k := 0; k < K; k++ {
				av := a[ao+m*K+k]
				brow := b[bo+k*N : bo+(k+1)*N]
				for n, bv := range brow {
					orow[n] += av * bv
				}
			}
		}
	}
	return out
}

// matMul is ONNX MatMul-13: numpy matmul for float and integer dtypes.
func matMul(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	if err := ref.SameDType(a.DType, b); err != nil {
		return nil, err
	}
	if !a.DType.IsFloat() && !a.DType.IsInt() {
		return nil, ref.Unsupported("MatMul on %v", a.DType)
	}
	p, err := planMatMul(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	if a.DType.IsFloat() {
		return []*ir.Tensor{fromFloats(a.DType, p.out, p.floats(toFloats(a), toFloats(b)))}, nil
	}
	return []*ir.Tensor{fromInts(a.DType, p.out, p.ints(toInts(a), toInts(b)))}, nil
}

// transpose2 returns the row-major transpose of an r×c matrix.
func transpose2[T any](x []T, r, c int) []T {
	out := make([]T, len(x))
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = x[i*c+j]
		}
	}
	return out
}

// gemm is ONNX Gemm-13: Y = alpha*op(A)*op(B) + beta*C with op a optional
// transpose and C unidirectionally broadcast to M×N. Integer dtypes need
// integral alpha and beta (computed exactly in int64).
func gemm(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	var c *ir.Tensor
	if len(in) > 2 {
		c = in[2]
	}
	if err := ref.SameDType(a.DType, b, c); err != nil {
		return nil, err
	}
	if !a.DType.IsFloat() && !a.DType.IsInt() {
		return nil, ref.Unsupported("Gemm on %v", a.DType)
	}
	if len(a.Shape) != 2 || len(b.Shape) != 2 {
		return nil, fmt.Errorf("Gemm needs 2-D A and B, got shapes %v and %v", a.Shape, b.Shape)
	}
	transA, transB := n.AttrInt("transA", 0) != 0, n.AttrInt("transB", 0) != 0
	alpha, beta := float64(n.AttrFloat("alpha", 1)), float64(n.AttrFloat("beta", 1))
	M, K := int(a.Shape[0]), int(a.Shape[1])
	if transA {
		M, K = K, M
	}
	K2, N := int(b.Shape[0]), int(b.Shape[1])
	if transB {
		K2, N = N, K2
	}
	if K != K2 {
		return nil, fmt.Errorf("Gemm inner dims differ: A %v (transA=%v), B %v (transB=%v)", a.Shape, transA, b.Shape, transB)
	}
	// cIndex maps output (m, n) to C's linear index under unidirectional broadcasting.
	var cStr []int64
	if c != nil {
		if len(c.Shape) > 2 {
			return nil, fmt.Errorf("Gemm C has rank %d, want <= 2", len(c.Shape))
		}
		outShape := []int64{int64(M), int64(N)}
		off := 2 - len(c.Shape)
		for i, d := range c.Shape {
			if d != 1 && d != outShape[off+i] {
				return nil, fmt.Errorf("Gemm C shape %v does not broadcast to [%d %d]", c.Shape, M, N)
			}
		}
		cStr = ref.BroadcastStrides(c.Shape, outShape)
	}
	cIndex := func(m, j int) int { return m*int(cStr[0]) + j*int(cStr[1]) }
	p := &mmPlan{M: M, K: K, N: N, aOff: []int{0}, bOff: []int{0}, out: []int64{int64(M), int64(N)}}
	if a.DType.IsFloat() {
		av, bv := toFloats(a), toFloats(b)
		if transA {
			av = transpose2(av, K, M)
		}
		if transB {
			bv = transpose2(bv, N, K)
		}
		y := p.floats(av, bv)
		var cv []float64
		if c != nil {
			cv = toFloats(c)
		}
		gemmScale(y, cv, alpha, beta, M, N, cIndex)
		return []*ir.Tensor{fromFloats(a.DType, p.out, y)}, nil
	}
	ia, ib := int64(alpha), int64(beta)
	if float64(ia) != alpha || float64(ib) != beta {
		return nil, ref.Unsupported("Gemm on %v with non-integral alpha %g or beta %g", a.DType, alpha, beta)
	}
	av, bv := toInts(a), toInts(b)
	if transA {
		av = transpose2(av, K, M)
	}
	if transB {
		bv = transpose2(bv, N, K)
	}
	y := p.ints(av, bv)
	var cv []int64
	if c != nil {
		cv = toInts(c)
	}
	gemmScale(y, cv, ia, ib, M, N, cIndex)
	return []*ir.Tensor{fromInts(a.DType, p.out, y)}, nil
}

// gemmScale turns the M×N product y into alpha·y + beta·C in place; C (cv,
// nil when absent) is read through cIndex, which applies its broadcasting.
func gemmScale[T float64 | int64](y, cv []T, alpha, beta T, M, N int, cIndex func(m, j int) int) {
	for m := 0; m < M; m++ {
		for j := 0; j < N; j++ {
			v := alpha * y[m*N+j]
			if cv != nil {
				v += beta * cv[cIndex(m, j)]
			}
			y[m*N+j] = v
		}
	}
}

// is8bit reports whether dt is int8 or uint8.
func is8bit(dt ir.DType) bool { return dt == ir.Int8 || dt == ir.Uint8 }

// zpIndexA returns, for matmul operand A (shape [..., M, K]) and a
// per-tensor or per-row parameter p, a function from A's linear index to
// p's linear index. Allowed shapes: one element, [M], or A's shape with
// the last dim 1.
func zpIndexA(what string, a []int64, p *ir.Tensor) (func(i int) int, error) {
	if isScalarLike(p) {
		return func(int) int { return 0 }, nil
	}
	r := len(a)
	K := int(a[r-1])
	M := 1
	if r >= 2 {
		M = int(a[r-2])
	}
	switch {
	case len(p.Shape) == 1 && int(p.Shape[0]) == M:
		return func(i int) int { return (i / K) % M }, nil
	case len(p.Shape) == r && p.Shape[r-1] == 1 && slices.Equal(p.Shape[:r-1], a[:r-1]):
		return func(i int) int { return i / K }, nil
	}
	return nil, fmt.Errorf("%s shape %v does not match A %v (want a scalar, [M] or [..., M, 1])", what, p.Shape, a)
}

// zpIndexB is zpIndexA for operand B (shape [..., K, N]) with per-column
// parameters: one element, [N], or B's shape with dim -2 set to 1.
func zpIndexB(what string, b []int64, p *ir.Tensor) (func(i int) int, error) {
	if isScalarLike(p) {
		return func(int) int { return 0 }, nil
	}
	r := len(b)
	N := int(b[r-1])
	K := int(b[0])
	if r >= 2 {
		K = int(b[r-2])
	} else {
		N = 1
	}
	switch {
	case len(p.Shape) == 1 && int(p.Shape[0]) == N:
		return func(i int) int { return i % N }, nil
	case r >= 2 && len(p.Shape) == r && p.Shape[r-2] == 1 && p.Shape[r-1] == int64(N) && slices.Equal(p.Shape[:r-2], b[:r-2]):
		return func(i int) int { return (i/(K*N))*N + i%N }, nil
	}
	return nil, fmt.Errorf("%s shape %v does not match B %v (want a scalar, [N] or [..., 1, N])", what, p.Shape, b)
}

// shifted returns t's values minus the zero point zp[idx(i)] (zp may be nil).
func shifted(t, zp *ir.Tensor, idx func(int) int) []int64 {
	v := toInts(t)
	if zp != nil {
		for i := range v {
			v[i] -= zp.Int64(idx(i))
		}
	}
	return v
}

// matMulInteger is ONNX MatMulInteger-10: (A - a_zero_point) ×
// (B - b_zero_point) for 8-bit operands, accumulated into int32.
func matMulInteger(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	aZP, bZP := opt(in, 2), opt(in, 3)
	if !is8bit(a.DType) || !is8bit(b.DType) {
		return nil, ref.Unsupported("MatMulInteger on %v × %v (want int8/uint8)", a.DType, b.DType)
	}
	p, err := planMatMul(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	av, bv, err := shiftOperands(a, b, aZP, bZP, "a_zero_point", "b_zero_point")
	if err != nil {
		return nil, err
	}
	return []*ir.Tensor{fromInts(ir.Int32, p.out, p.ints(av, bv))}, nil
}

// shiftOperands subtracts the (optional) zero points from both operands.
func shiftOperands(a, b, aZP, bZP *ir.Tensor, aName, bName string) ([]int64, []int64, error) {
	idxA, idxB := func(int) int { return 0 }, func(int) int { return 0 }
	var err error
	if aZP != nil {
		if aZP.DType != a.DType {
			return nil, nil, fmt.Errorf("%s is %v, A is %v", aName, aZP.DType, a.DType)
		}
		if idxA, err = zpIndexA(aName, a.Shape, aZP); err != nil {
			return nil, nil, err
		}
	}
	if bZP != nil {
		if bZP.DType != b.DType {
			return nil, nil, fmt.Errorf("%s is %v, B is %v", bName, bZP.DType, b.DType)
		}
		if idxB, err = zpIndexB(bName, b.Shape, bZP); err != nil {
			return nil, nil, err
		}
	}
	return shifted(a, aZP, idxA), shifted(b, bZP, idxB), nil
}

// opt returns optional input i, or nil.
func opt(in []*ir.Tensor, i int) *ir.Tensor {
	if i < len(in) {
		return in[i]
	}
	return nil
}

// qlinearMatMul is ONNX QLinearMatMul-21 for 8-bit integer types:
// y = saturate(round((a-a_zp)(b-b_zp) · a_scale·b_scale/y_scale) + y_zp),
// with a_scale/a_zp per tensor or per row of A, b_scale/b_zp per tensor or
// per column of B, and y_scale/y_zp per tensor.
func qlinearMatMul(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1, 3, 4, 6); err != nil {
		return nil, err
	}
	a, aS, aZP, b, bS, bZP, yS, yZP := in[0], in[1], opt(in, 2), in[3], in[4], opt(in, 5), in[6], opt(in, 7)
	if !is8bit(a.DType) || !is8bit(b.DType) {
		return nil, ref.Unsupported("QLinearMatMul on %v × %v (want int8/uint8)", a.DType, b.DType)
	}
	outDT := ir.Uint8
	if yZP != nil {
		outDT = yZP.DType
	}
	if !is8bit(outDT) {
		return nil, ref.Unsupported("QLinearMatMul output %v", outDT)
	}
	for _, s := range []*ir.Tensor{aS, bS, yS} {
		if err := needFloat("QLinearMatMul scale", s); err != nil {
			return nil, err
		}
	}
	if !isScalarLike(yS) || (yZP != nil && !isScalarLike(yZP)) {
		return nil, ref.Unsupported("QLinearMatMul with per-axis y_scale/y_zero_point (shapes %v)", yS.Shape)
	}
	p, err := planMatMul(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	av, bv, err := shiftOperands(a, b, aZP, bZP, "a_zero_point", "b_zero_point")
	if err != nil {
		return nil, err
	}
	if !isScalarLike(aS) && !(len(aS.Shape) == 1 && int(aS.Shape[0]) == p.M) {
		return nil, fmt.Errorf("a_scale shape %v: want a scalar or [%d]", aS.Shape, p.M)
	}
	if !isScalarLike(bS) && !(len(bS.Shape) == 1 && int(bS.Shape[0]) == p.N) {
		return nil, fmt.Errorf("b_scale shape %v: want a scalar or [%d]", bS.Shape, p.N)
	}
	acc := p.ints(av, bv)
	var zp int64
	if yZP != nil {
		zp = yZP.Int64(0)
	}
	ys := float32(yS.Float64(0))
	lo, hi := qRange(outDT)
	y := make([]int64, len(acc))
	for i, v := range acc {
		m, j := (i/p.N)%p.M, i%p.N
		as := float32(aS.Float64(min(m, aS.Len()-1)))
		bs := float32(bS.Float64(min(j, bS.Len()-1)))
		y[i] = requantize(float64(v), as*bs/ys, zp, lo, hi)
	}
	return []*ir.Tensor{fromInts(outDT, p.out, y)}, nil
}
