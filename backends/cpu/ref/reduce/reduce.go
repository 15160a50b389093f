package reduce

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// reduceOp names one of the Reduce* operators.
type reduceOp int

const (
	opSum reduceOp = iota
	opMean
	opMax
	opMin
	opProd
	opL1
	opL2
	opLogSum
	opLogSumExp
	opSumSquare
)

var reduceOps = map[string]reduceOp{
	"ReduceSum":       opSum,
	"ReduceMean":      opMean,
	"ReduceMax":       opMax,
	"ReduceMin":       opMin,
	"ReduceProd":      opProd,
	"ReduceL1":        opL1,
	"ReduceL2":        opL2,
	"ReduceLogSum":    opLogSum,
	"ReduceLogSumExp": opLogSumExp,
	"ReduceSumSquare": opSumSquare,
}

func init() {
	for name, op := range reduceOps {
		ref.Register(name, func(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
			return reduceKernel(op, n, in)
		})
	}
}

// reduction describes how the elements of an input map onto the outputs of
// a reduction over some axes.
type reduction struct {
	// group[i] is the linear output index that input element i belongs to.
	group []int
	// count[o] is the number of input elements reduced into output o
	// (the same for every o; 0 when a reduced dim is empty).
	count int
	// nOut is the number of output elements.
	nOut int
	// shape is the output shape (reduced dims kept as 1 or dropped).
	shape []int64
}

// planReduction maps the elements of a tensor of shape in onto the outputs
// of a reduction over the dims marked in reduced.
func planReduction(in []int64, reduced []bool, keepdims bool) *reduction {
	kept := make([]int64, len(in)) // the keepdims shape
	var shape []int64
	count := 1
	for d, size := range in {
		if reduced[d] {
			kept[d] = 1
			count *= int(size)
			if keepdims {
				shape = append(shape, 1)
			}
		} else {
			kept[d] = size
			shape = append(shape, size)
		}
	}
	if shape == nil {
		shape = []int64{}
	}
	// Strides into the output with 0 for reduced dims: walking the input
	// in row-major order then yields each element's output index.
	ks := ref.Strides(kept)
	for d := range ks {
		if reduced[d] {
			ks[d] = 0
		}
	}
	r := &reduction{group: make([]int, product(in)), count: count, nOut: product(kept), shape: shape}
	it := ref.NewIndexer(in, ks)
	for i := range r.group {
		r.group[i] = int(it.Offsets[0])
		it.Next()
	}
	return r
}

// reducedAxes decides which dims a Reduce* node reduces: the axes input when
// present and non-empty, otherwise all dims, or none when
// noop_with_empty_axes is set.
func reducedAxes(n *ir.Node, in []*ir.Tensor, rank int) ([]bool, error) {
	var axes []int64
	if len(in) > 1 && in[1] != nil {
		a := in[1]
		if a.DType != ir.Int64 && a.DType != ir.Int32 {
			return nil, fmt.Errorf("axes input is %v, want i64", a.DType)
		}
		if len(a.Shape) > 1 {
			return nil, fmt.Errorf("axes input has shape %v, want 1-D", a.Shape)
		}
		axes = a.Int64s()
	}
	reduced := make([]bool, rank)
	if len(axes) == 0 {
		if n.AttrInt("noop_with_empty_axes", 0) == 0 {
			for d := range reduced {
				reduced[d] = true
			}
		}
		return reduced, nil
	}
	norm, err := ref.NormAxes(axes, rank)
	if err != nil {
		return nil, err
	}
	for _, d := range norm {
		reduced[d] = true
	}
	return reduced, nil
}

// reduceKernel runs one Reduce* operator. With noop_with_empty_axes and no
// axes, every output element is the reduction of the single input element at
// its position, so ReduceSum/Mean/Max/Min/Prod are the identity while
// ReduceL1 gives |x|, ReduceSumSquare x², and so on (as the ONNX reference
// implementation does).
func reduceKernel(op reduceOp, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	dt := x.DType
	switch {
	case dt.IsFloat() || dt.IsInt():
	case dt == ir.Bool && (op == opMax || op == opMin):
	default:
		return nil, ref.Unsupported("%s on %v", n.Op, dt)
	}
	reduced, err := reducedAxes(n, in, len(x.Shape))
	if err != nil {
		return nil, err
	}
	r := planReduction(x.Shape, reduced, n.AttrInt("keepdims", 1) != 0)
	out := ir.NewTensor(dt, r.shape)
	switch {
	case dt.IsFloat() || op == opL2 || op == opLogSum || op == opLogSumExp:
		// The logarithmic and root reductions of integers are computed in
		// float64 and truncated toward zero.
		vals := reduceFloat(op, x, r)
		for o, v := range vals {
			out.SetFloat64(o, v)
		}
	case op == opMax || op == opMin:
		reduceIntMinMax(op, x, r, out)
	default:
		vals := reduceInt(op, x, r)
		for o, v := range vals {
			out.SetInt64(o, v)
		}
	}
	return []*ir.Tensor{out}, nil
}

// reduceFloat reduces x in float64. Max and Min propagate NaN; empty sets
// give the identity of the reduction (0 for sums, 1 for Prod, -inf for Max,
// LogSum and LogSumExp, +inf for Min, NaN for Mean).
func reduceFloat(op reduceOp, x *ir.Tensor, r *reduction) []float64 {
	if op == opLogSumExp {
		return logSumExp(x, r)
	}
	acc := make([]float64, r.nOut)
	init := 0.0
	switch op {
	case opProd:
		init = 1
	case opMax:
		init = math.Inf(-1)
	case opMin:
		init = math.Inf(1)
	}
	for o := range acc {
		acc[o] = init
	}
	for i, o := range r.group {
		v := x.Float64(i)
		switch op {
		case opSum, opMean, opLogSum:
			acc[o] += v
		case opProd:
			acc[o] *= v
		case opL1:
			acc[o] += math.Abs(v)
		case opL2, opSumSquare:
			acc[o] += v * v
		case opMax:
			if v > acc[o] || math.IsNaN(v) {
				acc[o] = v
			}
		case opMin:
			if v < acc[o] || math.IsNaN(v) {
				acc[o] = v
			}
		}
	}
	for o, a := range acc {
		switch op {
		case opMean:
			acc[o] = a / float64(r.count)
		case opL2:
			acc[o] = math.Sqrt(a)
		case opLogSum:
			acc[o] = math.Log(a)
		}
	}
	return acc
}

// logSumExp computes log(sum(exp(x))) per output, shifted by the group's
// maximum for stability (unless that maximum is infinite or NaN).
func logSumExp(x *ir.Tensor, r *reduction) []float64 {
	mx := make([]float64, r.nOut)
	for o := range mx {
		mx[o] = math.Inf(-1)
	}
	for i, o := range r.group {
		if v := x.Float64(i); v > mx[o] || math.IsNaN(v) {
			mx[o] = v
		}
	}
	for o, m := range mx {
		if math.IsInf(m, 0) || math.IsNaN(m) {
			mx[o] = 0
		}
	}
	sum := make([]float64, r.nOut)
	for i, o := range r.group {
		sum[o] += math.Exp(x.Float64(i) - mx[o])
	}
	for o := range sum {
		sum[o] = math.Log(sum[o]) + mx[o]
	}
	return sum
}

// reduceInt reduces an integer tensor in int64 with wrap-around (which is
// also exact modulo 2^64 for uint64 sums and products).
func reduceInt(op reduceOp, x *ir.Tensor, r *reduction) []int64 {
	acc := make([]int64, r.nOut)
	if op == opProd {
		for o := range acc {
			acc[o] = 1
		}
	}
	signed := x.DType.IsSigned()
	for i, o := range r.group {
		v := x.Int64(i)
		switch op {
		case opSum, opMean:
			acc[o] += v
		case opProd:
			acc[o] *= v
		case opSumSquare:
			acc[o] += v * v
		case opL1:
			if signed && v < 0 {
				v = -v
			}
			acc[o] += v
		}
	}
	if op == opMean {
		// The mean truncates toward zero; an empty set has no mean and
		// integers have no NaN, so it gives 0.
		for o, a := range acc {
			switch {
			case r.count == 0:
				acc[o] = 0
			case signed:
				acc[o] = a / int64(r.count)
			default:
				acc[o] = int64(uint64(a) / uint64(r.count))
			}
		}
	}
	return acc
}

// reduceIntMinMax computes ReduceMax/ReduceMin of an integer or bool tensor
// into out. An empty set gives the dtype's minimum (Max) or maximum (Min).
func reduceIntMinMax(op reduceOp, x *ir.Tensor, r *reduction, out *ir.Tensor) {
	lo, hi := intRange(x.DType)
	if x.DType.IsSigned() {
		acc := make([]int64, r.nOut)
		for o := range acc {
			acc[o] = hi
			if op == opMax {
				acc[o] = lo
			}
		}
		for i, o := range r.group {
			v := x.Int64(i)
			if (op == opMax && v > acc[o]) || (op == opMin && v < acc[o]) {
				acc[o] = v
			}
		}
		for o, v := range acc {
			out.SetInt64(o, v)
		}
		return
	}
	acc := make([]uint64, r.nOut)
	for o := range acc {
		acc[o] = uint64(hi)
		if op == opMax {
			acc[o] = uint64(lo)
		}
	}
	for i, o := range r.group {
		v := x.Uint64(i)
		if (op == opMax && v > acc[o]) || (op == opMin && v < acc[o]) {
			acc[o] = v
		}
	}
	for o, v := range acc {
		out.SetInt64(o, int64(v))
	}
}

// intRange returns the smallest and largest value of an integer or bool
// dtype; for unsigned types the bounds are bit patterns (uint64 max is -1).
func intRange(dt ir.DType) (lo, hi int64) {
	switch dt {
	case ir.Int8:
		return math.MinInt8, math.MaxInt8
	case ir.Int16:
		return math.MinInt16, math.MaxInt16
	case ir.Int32:
		return math.MinInt32, math.MaxInt32
	case ir.Int64:
		return math.MinInt64, math.MaxInt64
	case ir.Uint8:
		return 0, math.MaxUint8
	case ir.Uint16:
		return 0, math.MaxUint16
	case ir.Uint32:
		return 0, math.MaxUint32
	case ir.Uint64:
		return 0, -1
	case ir.Bool:
		return 0, 1
	}
	return 0, 0
}
