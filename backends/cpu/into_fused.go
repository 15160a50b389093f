package cpu

import (
	"math"
	"slices"

	"github.com/weftrt/weft/ir"
)

func init() {
	registerInto(buildFusedMatMul, "FusedMatMul")
	registerInto(buildFusedConv, "FusedConv")
}

// fusedAct returns the float32 activation named by n's activation
// attribute (nil for none) with the formulas of ref/fused; ok=false for an
// activation it does not know.
func fusedAct(n *ir.Node) (func(y []float32), bool) {
	var f func(float64) float64
	switch n.AttrString("activation", "") {
	case "":
		return nil, true
	case "Relu":
		return func(y []float32) {
			for i, v := range y {
				if v < 0 {
					y[i] = 0
				}
			}
		}, true
	case "LeakyRelu":
		alpha := float64(n.AttrFloat("activation_alpha", 0.01))
		f = func(x float64) float64 {
			if x < 0 {
				return alpha * x
			}
			return x
		}
	case "Sigmoid":
		f = sigmoid
	case "Tanh":
		f = math.Tanh
	case "Gelu":
		f = func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	case "GeluTanh":
		c := math.Sqrt(2 / math.Pi)
		f = func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(c*(x+0.044715*x*x*x))) }
	case "SiLU":
		f = func(x float64) float64 { return x * sigmoid(x) }
	case "Clip":
		lo, hi := math.Inf(-1), math.Inf(1)
		if n.Has("activation_alpha") {
			lo = float64(n.AttrFloat("activation_alpha", 0))
		}
		if n.Has("activation_beta") {
			hi = float64(n.AttrFloat("activation_beta", 0))
		}
		f = func(x float64) float64 {
			if x < lo {
				x = lo
			}
			if x > hi {
				x = hi
			}
			return x
		}
	default:
		return nil, false
	}
	return func(y []float32) {
		for i, v := range y {
			y[i] = float32(f(float64(v)))
		}
	}, true
}

// buildFusedMatMul handles float32 FusedMatMul whose Bias broadcasts into
// the product's shape: the MatMul kernel, then the bias, then the
// activation, all in the output.
func buildFusedMatMul(s *nodeSpec) intoKernel {
	a, b, bias, y := s.input(0), s.input(1), s.input(2), s.out[0]
	if len(s.in) > 3 || len(s.out) != 1 || !allF32(a, b, bias, y) {
		return nil
	}
	act, ok := fusedAct(s.n)
	if !ok {
		return nil
	}
	sub := &nodeSpec{n: s.n, in: []arg{a, b}, out: s.out}
	mm := buildMatMul(sub)
	if mm == nil {
		return nil
	}
	s.scratch = sub.scratch
	var bc *bcast
	if bias.ok {
		if bc, ok = newBcast(y.shape, bias.shape, y.shape); !ok {
			return nil
		}
	}
	return func(in, out []*ir.Tensor, scratch []byte) error {
		if err := mm(in[:2], out, scratch); err != nil {
			return err
		}
		yv := out[0].Float32s()
		if bc != nil {
			addBias(bc, yv, in[2].Float32s())
		}
		if act != nil {
			act(yv)
		}
		return nil
	}
}

// addBias adds z, broadcast by bc (whose output and first operand are y's
// shape), to y in place.
func addBias(bc *bcast, y, z []float32) {
	if bc.contiguous {
		binRow(opAdd, y, y, z, 1, 1)
		return
	}
	for r := 0; r < bc.rows; r++ {
		_, oz := bc.offsets(r)
		row := y[r*bc.inner : (r+1)*bc.inner]
		binRow(opAdd, row, row, z[oz:], 1, bc.sb)
	}
}

// buildFusedConv handles float32 FusedConv: the Conv kernel, then the
// residual Z (Conv's output shape), then the activation.
func buildFusedConv(s *nodeSpec) intoKernel {
	z, y := s.input(3), s.out[0]
	if len(s.in) > 4 || len(s.out) != 1 || !allF32(z, y) || z.ok && !slices.Equal(z.shape, y.shape) {
		return nil
	}
	act, ok := fusedAct(s.n)
	if !ok {
		return nil
	}
	convIn := s.in
	if len(convIn) > 3 {
		convIn = convIn[:3]
	}
	for len(convIn) > 2 && !convIn[len(convIn)-1].ok {
		convIn = convIn[:len(convIn)-1]
	}
	sub := &nodeSpec{n: s.n, in: convIn, out: s.out}
	conv := buildConv(sub)
	if conv == nil {
		return nil
	}
	s.scratch = sub.scratch
	nConv := len(convIn)
	return func(in, out []*ir.Tensor, scratch []byte) error {
		if err := conv(in[:nConv], out, scratch); err != nil {
			return err
		}
		yv := out[0].Float32s()
		if z.ok {
			zv := in[3].Float32s()
			binRow(opAdd, yv, yv, zv, 1, 1)
		}
		if act != nil {
			act(yv)
		}
		return nil
	}
}
