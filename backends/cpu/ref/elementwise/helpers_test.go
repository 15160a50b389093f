package elementwise

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// run builds a node for op with the given attributes, nOut outputs and
// inputs (nil: absent), and runs it through ref.RunNode, which also checks
// the outputs' count and byte sizes.
func run(op string, attrs ir.Attrs, nOut int, in ...*ir.Tensor) ([]*ir.Tensor, error) {
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	env := backends.NewEnv(nil)
	n := &ir.Node{Name: "n", Op: op, Attrs: attrs}
	for _, t := range in {
		if t == nil {
			n.Inputs = append(n.Inputs, nil)
			continue
		}
		v := &ir.Value{DType: t.DType, Shape: ir.ShapeOf(t.Shape)}
		env.Set(v, t)
		n.Inputs = append(n.Inputs, v)
	}
	for range nOut {
		n.Outputs = append(n.Outputs, &ir.Value{})
	}
	if err := ref.RunNode(&ref.Context{Env: env}, n); err != nil {
		return nil, err
	}
	out := make([]*ir.Tensor, nOut)
	for i, v := range n.Outputs {
		out[i] = env.Get(v)
	}
	return out, nil
}

// run1 runs a one-output op and fails the test on error.
func run1(t *testing.T, op string, attrs ir.Attrs, in ...*ir.Tensor) *ir.Tensor {
	t.Helper()
	out, err := run(op, attrs, 1, in...)
	require.NoError(t, err)
	return out[0]
}

// attrs builds node attributes.
func attrs(opts ...ir.AttrOption) ir.Attrs {
	a := ir.Attrs{}
	for _, o := range opts {
		o(a)
	}
	return a
}

// tf builds a tensor of dtype dt from float64 values (rounded by ir).
func tf(dt ir.DType, shape []int64, vals ...float64) *ir.Tensor {
	return ir.FromFloat64(dt, shape, vals)
}

// ti builds an integer or bool tensor from int64 values (wrapped to the width).
func ti(dt ir.DType, shape []int64, vals ...int64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	if len(vals) != t.Len() {
		panic("ti: wrong number of values")
	}
	for i, v := range vals {
		t.SetInt64(i, v)
	}
	return t
}

// tb builds a bool tensor.
func tb(shape []int64, vals ...bool) *ir.Tensor {
	t := ir.NewTensor(ir.Bool, shape)
	for i, v := range vals {
		t.SetInt64(i, b2i(v))
	}
	return t
}

// s is shorthand for a shape.
func s(dims ...int64) []int64 { return append([]int64{}, dims...) }

func floatsOf(t *ir.Tensor) []float64 {
	out := make([]float64, t.Len())
	for i := range out {
		out[i] = t.Float64(i)
	}
	return out
}

func intsOf(t *ir.Tensor) []int64 {
	out := make([]int64, t.Len())
	for i := range out {
		out[i] = t.Int64(i)
	}
	return out
}

func boolsOf(t *ir.Tensor) []bool {
	out := make([]bool, t.Len())
	for i := range out {
		out[i] = t.Bool(i)
	}
	return out
}

// requireFloats checks dtype, shape and values: equal when tol is 0,
// else within tol relative to max(1, |want|). NaN matches NaN only.
func requireFloats(t *testing.T, got *ir.Tensor, dt ir.DType, shape []int64, want []float64, tol float64) {
	t.Helper()
	require.Equal(t, dt, got.DType)
	require.Equal(t, shape, got.Shape)
	g := floatsOf(got)
	require.Len(t, g, len(want))
	for i := range want {
		w := want[i]
		switch {
		case math.IsNaN(w):
			require.Truef(t, math.IsNaN(g[i]), "element %d: got %v, want NaN", i, g[i])
		case tol == 0 || math.IsInf(w, 0):
			require.Equalf(t, w, g[i], "element %d (all: %v)", i, g)
		default:
			require.InDeltaf(t, w, g[i], tol*max(1, math.Abs(w)), "element %d (all: %v)", i, g)
		}
	}
}

// requireInts checks dtype, shape and integer values.
func requireInts(t *testing.T, got *ir.Tensor, dt ir.DType, shape []int64, want ...int64) {
	t.Helper()
	require.Equal(t, dt, got.DType)
	require.Equal(t, shape, got.Shape)
	require.Equal(t, append([]int64{}, want...), intsOf(got))
}

// requireBools checks shape and bool values.
func requireBools(t *testing.T, got *ir.Tensor, shape []int64, want ...bool) {
	t.Helper()
	require.Equal(t, ir.Bool, got.DType)
	require.Equal(t, shape, got.Shape)
	require.Equal(t, append([]bool{}, want...), boolsOf(got))
}

// tolFor is the relative tolerance for results of transcendental functions,
// whose last float64 bit may differ between libraries.
func tolFor(dt ir.DType) float64 {
	switch dt {
	case ir.Float64:
		return 1e-14
	case ir.Float32:
		return 1e-6
	}
	return 1e-3
}

var inf = math.Inf(1)
var nan = math.NaN()
