package elementwise

import (
	"errors"
	"fmt"
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// eachBroadcast calls fn(o, offs) for every element o (row-major) of shape,
// where offs[k] is the linear index of the element of ins[k] that
// broadcasts to o. shape must be the broadcast of the inputs' shapes.
func eachBroadcast(shape []int64, ins []*ir.Tensor, fn func(o int, offs []int64)) {
	strides := make([][]int64, len(ins))
	for k, t := range ins {
		strides[k] = ref.BroadcastStrides(t.Shape, shape)
	}
	it := ref.NewIndexer(shape, strides...)
	for o := range int(ir.NumElements(shape)) {
		fn(o, it.Offsets)
		it.Next()
	}
}

// binary describes an elementwise operation on two values of one dtype
// class whose result has the inputs' dtype. Variadic ops (Max, Sum, ...)
// fold it left to right over their inputs.
type binary struct {
	types dtypeSet
	f     func(a, b float64) float64 // float dtypes, computed in float64
	i     func(a, b int64) int64     // signed integers; the result wraps to the width
	u     func(a, b uint64) uint64   // unsigned integers; the result wraps to the width
	b     func(a, b bool) bool       // bool

	// divides marks Div and Mod: an integer right operand must not be 0.
	divides bool
	// mean divides the float sum by the number of inputs (Mean).
	mean bool
	// unidirectional: the other inputs broadcast to input 0's shape, which
	// the output keeps (PRelu's slope).
	unidirectional bool
	// hint completes the error for a dtype outside types.
	hint string
}

// binaryMaker builds an op's binary from its attributes.
type binaryMaker func(n *ir.Node) (binary, error)

var errDivZero = errors.New("integer division by zero")

// registerFold registers a kernel that broadcasts its minIn..maxIn inputs
// (maxIn < 0: unbounded), which must share one dtype, and folds the binary
// that mk builds over them element by element.
func registerFold(op string, minIn, maxIn int, mk binaryMaker) {
	ref.Register(op, func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		if err := needOutputs(n, 1); err != nil {
			return nil, err
		}
		if len(in) < minIn || (maxIn >= 0 && len(in) > maxIn) {
			return nil, fmt.Errorf("got %d inputs, want %s", len(in), countRange(minIn, maxIn))
		}
		for k := range in {
			if err := ref.Need(in, k); err != nil {
				return nil, err
			}
		}
		op, err := mk(n)
		if err != nil {
			return nil, err
		}
		dt := in[0].DType
		for k, t := range in[1:] {
			if t.DType != dt {
				return nil, fmt.Errorf("input %d is %v but input 0 is %v; the inputs must share one dtype", k+1, t.DType, dt)
			}
		}
		if err := checkDType("the inputs", dt, op.types); err != nil {
			if op.hint != "" {
				err = fmt.Errorf("%w (%s)", err, op.hint)
			}
			return nil, err
		}
		shape, err := broadcastShape(in, op.unidirectional)
		if err != nil {
			return nil, err
		}
		out := ir.NewTensor(dt, shape)
		if err := fold(out, in, op); err != nil {
			return nil, err
		}
		return []*ir.Tensor{out}, nil
	})
}

// fold fills out (of the inputs' dtype and broadcast shape) with the
// left-to-right fold of op over the inputs.
func fold(out *ir.Tensor, in []*ir.Tensor, op binary) error {
	var err error
	eachBroadcast(out.Shape, in, func(o int, offs []int64) {
		at := func(k int) int { return int(offs[k]) }
		switch dt := out.DType; {
		case dt.IsFloat():
			acc := in[0].Float64(at(0))
			for k := 1; k < len(in); k++ {
				acc = op.f(acc, in[k].Float64(at(k)))
			}
			if op.mean {
				acc /= float64(len(in))
			}
			setFloat(out, o, acc)
		case dt.IsSigned():
			acc := in[0].Int64(at(0))
			for k := 1; k < len(in); k++ {
				b := in[k].Int64(at(k))
				if op.divides && b == 0 {
					err = errDivZero
					return
				}
				acc = op.i(acc, b)
			}
			out.SetInt64(o, acc)
		case dt.IsUnsigned():
			acc := in[0].Uint64(at(0))
			for k := 1; k < len(in); k++ {
				b := in[k].Uint64(at(k))
				if op.divides && b == 0 {
					err = errDivZero
					return
				}
				acc = op.u(acc, b)
			}
			out.SetInt64(o, int64(acc))
		default:
			acc := in[0].Bool(at(0))
			for k := 1; k < len(in); k++ {
				acc = op.b(acc, in[k].Bool(at(k)))
			}
			out.SetInt64(o, b2i(acc))
		}
	})
	return err
}

// broadcastShape is the numpy broadcast of the inputs' shapes or, for a
// unidirectional op, input 0's shape after checking that the others
// broadcast to it.
func broadcastShape(in []*ir.Tensor, unidirectional bool) ([]int64, error) {
	shapes := make([][]int64, len(in))
	for k, t := range in {
		shapes[k] = t.Shape
	}
	shape, err := ref.BroadcastShapes(shapes...)
	if err != nil {
		return nil, err
	}
	if unidirectional && !slices.Equal(shape, in[0].Shape) {
		return nil, fmt.Errorf("shapes %v do not broadcast to input 0's shape %v", shapes[1:], in[0].Shape)
	}
	return shape, nil
}

func countRange(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %d", lo)
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
