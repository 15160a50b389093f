package nn

import (
	"fmt"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() {
	ref.Register("Conv", conv)
	ref.Register("ConvInteger", convInteger)
	ref.Register("QLinearConv", qlinearConv)
}

// convSetup is a validated convolution: batch N, input channels C, output
// channels M in group groups, the window taps and the output shape.
type convSetup struct {
	N, C, M, group int
	win            *windows
	out            []int64
}

// setupConv validates X (N×C×D...) and W (M×C/group×K...) against n's
// attributes and resolves the window geometry.
func setupConv(op string, n *ir.Node, x, w []int64) (*convSetup, error) {
	if len(x) < 3 {
		return nil, fmt.Errorf("%s input X has shape %v, want N x C x D1 x ... (rank >= 3)", op, x)
	}
	if len(w) != len(x) {
		return nil, fmt.Errorf("%s weight W has shape %v, want rank %d like X %v", op, w, len(x), x)
	}
	group := int(n.AttrInt("group", 1))
	if group < 1 {
		return nil, fmt.Errorf("%s group %d < 1", op, group)
	}
	s := &convSetup{N: int(x[0]), C: int(x[1]), M: int(w[0]), group: group}
	if s.C != int(w[1])*group {
		return nil, fmt.Errorf("%s: X has %d channels, W %v with group %d expects %d", op, s.C, w, group, int(w[1])*group)
	}
	if s.M%group != 0 {
		return nil, fmt.Errorf("%s: %d output channels not divisible by group %d", op, s.M, group)
	}
	kernel := w[2:]
	if ks := n.AttrInts("kernel_shape", nil); ks != nil && !slices.Equal(ks, kernel) {
		return nil, fmt.Errorf("%s: kernel_shape %v differs from W's spatial dims %v", op, ks, kernel)
	}
	g, err := resolveGeom(n, x[2:], kernel, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	s.win = buildWindows(g)
	s.out = append([]int64{x[0], w[0]}, outShape(g)...)
	return s, nil
}

// run is a direct grouped convolution on float64 data: x is N×C×(in
// spatial), w is M×(C/group)×(kernel), b (length M) may be nil. Each output
// sums bias, then input channels in order, then taps in kernel order.
func (s *convSetup) run(x, w, b []float64) []float64 {
	win := s.win
	cg, mg := s.C/s.group, s.M/s.group
	y := make([]float64, s.N*s.M*win.outSize)
	for n := 0; n < s.N; n++ {
		for m := 0; m < s.M; m++ {
			g := m / mg
			yb := (n*s.M + m) * win.outSize
			for o := 0; o < win.outSize; o++ {
				var acc float64
				if b != nil {
					acc = b[m]
				}
				taps := win.taps[win.start[o]:win.start[o+1]]
				for ic := 0; ic < cg; ic++ {
					xc := x[(n*s.C+g*cg+ic)*win.inSize:]
					wc := w[(m*cg+ic)*win.kSize:]
					for _, t := range taps {
						acc += xc[t.x] * wc[t.k]
					}
				}
				y[yb+o] = acc
			}
		}
	}
	return y
}

// conv is ONNX Conv-11 for float dtypes, 1-D to N-D, with groups,
// dilations, strides, explicit or automatic padding and an optional bias.
func conv(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, w, b := in[0], in[1], opt(in, 2)
	if err := needFloat("Conv X", x); err != nil {
		return nil, err
	}
	if err := ref.SameDType(x.DType, w, b); err != nil {
		return nil, err
	}
	s, err := setupConv("Conv", n, x.Shape, w.Shape)
	if err != nil {
		return nil, err
	}
	var bv []float64
	if b != nil {
		if len(b.Shape) != 1 || int(b.Shape[0]) != s.M {
			return nil, fmt.Errorf("Conv bias has shape %v, want [%d]", b.Shape, s.M)
		}
		bv = toFloats(b)
	}
	return []*ir.Tensor{fromFloats(x.DType, s.out, s.run(toFloats(x), toFloats(w), bv))}, nil
}

// shiftX returns x's values minus a per-tensor zero point (nil: none).
func shiftX(what string, x, zp *ir.Tensor) ([]float64, error) {
	v := toFloats(x)
	if zp == nil {
		return v, nil
	}
	if zp.DType != x.DType {
		return nil, fmt.Errorf("%s is %v, input is %v", what, zp.DType, x.DType)
	}
	if !isScalarLike(zp) {
		return nil, fmt.Errorf("%s has shape %v, want a scalar (per-tensor)", what, zp.Shape)
	}
	z := zp.Float64(0)
	for i := range v {
		v[i] -= z
	}
	return v, nil
}

// shiftW returns w's values minus a per-tensor or per-output-channel
// (length M = w.Shape[0]) zero point (nil: none).
func shiftW(what string, w, zp *ir.Tensor) ([]float64, error) {
	v := toFloats(w)
	if zp == nil {
		return v, nil
	}
	if zp.DType != w.DType {
		return nil, fmt.Errorf("%s is %v, weight is %v", what, zp.DType, w.DType)
	}
	M := int(w.Shape[0])
	per := len(v) / max(M, 1)
	switch {
	case isScalarLike(zp):
		z := zp.Float64(0)
		for i := range v {
			v[i] -= z
		}
	case len(zp.Shape) == 1 && int(zp.Shape[0]) == M:
		for i := range v {
			v[i] -= zp.Float64(i / per)
		}
	default:
		return nil, fmt.Errorf("%s has shape %v, want a scalar or [%d]", what, zp.Shape, M)
	}
	return v, nil
}

// convInteger is ONNX ConvInteger-10: a convolution of (x - x_zero_point)
// and (w - w_zero_point) for 8-bit inputs, accumulated into int32. Padding
// contributes x_zero_point (i.e. nothing after the shift).
func convInteger(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	if !is8bit(x.DType) || !is8bit(w.DType) {
		return nil, ref.Unsupported("ConvInteger on %v, %v (want int8/uint8)", x.DType, w.DType)
	}
	s, err := setupConv("ConvInteger", n, x.Shape, w.Shape)
	if err != nil {
		return nil, err
	}
	xv, err := shiftX("x_zero_point", x, opt(in, 2))
	if err != nil {
		return nil, err
	}
	wv, err := shiftW("w_zero_point", w, opt(in, 3))
	if err != nil {
		return nil, err
	}
	acc := s.run(xv, wv, nil)
	y := ir.NewTensor(ir.Int32, s.out)
	for i, v := range acc {
		iv, err := exactInt(v)
		if err != nil {
			return nil, err
		}
		y.SetInt64(i, iv)
	}
	return []*ir.Tensor{y}, nil
}

// qlinearConv is ONNX QLinearConv-10 for 8-bit types: the integer
// convolution of the zero-point-shifted inputs plus the int32 bias B,
// requantized as saturate(round(acc · x_scale·w_scale[m]/y_scale) + y_zp).
// w_scale and w_zero_point may be per output channel.
func qlinearConv(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1, 3, 4, 6); err != nil {
		return nil, err
	}
	x, xS, w, wS, yS, yZP, b := in[0], in[1], in[3], in[4], in[6], opt(in, 7), opt(in, 8)
	if !is8bit(x.DType) || !is8bit(w.DType) {
		return nil, ref.Unsupported("QLinearConv on %v, %v (want int8/uint8)", x.DType, w.DType)
	}
	outDT := x.DType
	if yZP != nil {
		outDT = yZP.DType
	}
	if !is8bit(outDT) {
		return nil, ref.Unsupported("QLinearConv output %v", outDT)
	}
	for _, t := range []*ir.Tensor{xS, wS, yS} {
		if err := needFloat("QLinearConv scale", t); err != nil {
			return nil, err
		}
	}
	if !isScalarLike(xS) || !isScalarLike(yS) || (yZP != nil && !isScalarLike(yZP)) {
		return nil, ref.Unsupported("QLinearConv with per-axis x or y quantization")
	}
	s, err := setupConv("QLinearConv", n, x.Shape, w.Shape)
	if err != nil {
		return nil, err
	}
	if !isScalarLike(wS) && !(len(wS.Shape) == 1 && int(wS.Shape[0]) == s.M) {
		return nil, fmt.Errorf("w_scale has shape %v, want a scalar or [%d]", wS.Shape, s.M)
	}
	xv, err := shiftX("x_zero_point", x, opt(in, 2))
	if err != nil {
		return nil, err
	}
	wv, err := shiftW("w_zero_point", w, opt(in, 5))
	if err != nil {
		return nil, err
	}
	var bv []float64
	if b != nil {
		if b.DType != ir.Int32 || len(b.Shape) != 1 || int(b.Shape[0]) != s.M {
			return nil, fmt.Errorf("QLinearConv bias is %v, want i32[%d]", b, s.M)
		}
		bv = toFloats(b)
	}
	acc := s.run(xv, wv, bv)
	var zp int64
	if yZP != nil {
		zp = yZP.Int64(0)
	}
	lo, hi := qRange(outDT)
	xs, ys := float32(xS.Float64(0)), float32(yS.Float64(0))
	y := ir.NewTensor(outDT, s.out)
	per := len(acc) / max(s.N*s.M, 1)
	for i, v := range acc {
		m := (i / per) % s.M
		ws := float32(wS.Float64(min(m, wS.Len()-1)))
		y.SetInt64(i, requantize(v, xs*ws/ys, zp, lo, hi))
	}
	return []*ir.Tensor{y}, nil
}
