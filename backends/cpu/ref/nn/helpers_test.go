package nn

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// call runs the registered kernel for op on a node with the given
// attributes and number of outputs.
func call(op string, attrs []ir.AttrOption, nOut int, in ...*ir.Tensor) ([]*ir.Tensor, error) {
	k, ok := ref.Lookup(op)
	if !ok {
		return nil, errors.New("no kernel for " + op)
	}
	a := ir.Attrs{}
	for _, o := range attrs {
		o(a)
	}
	n := &ir.Node{Name: "t", Op: op, Attrs: a}
	for i := 0; i < nOut; i++ {
		n.Outputs = append(n.Outputs, &ir.Value{ID: i})
	}
	return k(&ref.Context{}, n, in)
}

// run is call that must succeed, with checked, fresh outputs.
func run(t *testing.T, op string, attrs []ir.AttrOption, nOut int, in ...*ir.Tensor) []*ir.Tensor {
	t.Helper()
	var before [][]byte
	for _, x := range in {
		if x != nil {
			before = append(before, append([]byte{}, x.Data...))
		}
	}
	out, err := call(op, attrs, nOut, in...)
	require.NoError(t, err)
	require.Len(t, out, nOut)
	for _, o := range out {
		require.NoError(t, o.Check())
	}
	i := 0
	for _, x := range in {
		if x != nil {
			require.Equal(t, before[i], x.Data, "kernel modified input %d", i)
			i++
		}
	}
	return out
}

// f builds a tensor of dtype dt.
func f(dt ir.DType, shape []int64, vals ...float64) *ir.Tensor {
	if len(vals) == 0 {
		return ir.NewTensor(dt, shape)
	}
	return ir.FromFloat64(dt, shape, vals)
}

// f32 builds a float32 tensor.
func f32(shape []int64, vals ...float64) *ir.Tensor { return f(ir.Float32, shape, vals...) }

// sh is a shape literal.
func sh(d ...int64) []int64 { return d }

// iota32 builds a float32 tensor holding 0, 1, 2, ... (plus start).
func iota32(start float64, shape ...int64) *ir.Tensor {
	n := ir.NumElements(shape)
	v := make([]float64, n)
	for i := range v {
		v[i] = start + float64(i)
	}
	return f32(shape, v...)
}

// expect checks a tensor's dtype, shape and values (within tol).
func expect(t *testing.T, got *ir.Tensor, dt ir.DType, shape []int64, tol float64, want ...float64) {
	t.Helper()
	require.Equal(t, dt, got.DType)
	require.Equal(t, append([]int64{}, shape...), append([]int64{}, got.Shape...))
	require.Equal(t, len(want), got.Len())
	for i, w := range want {
		g := got.Float64(i)
		if math.IsNaN(w) {
			require.True(t, math.IsNaN(g), "element %d: got %v, want NaN", i, g)
			continue
		}
		require.InDelta(t, w, g, tol+1e-6*math.Abs(w), "element %d of %v", i, got.Shape)
	}
}

// expectErr checks that the kernel fails, with ErrUnsupported when unsup.
func expectErr(t *testing.T, unsup bool, op string, attrs []ir.AttrOption, nOut int, in ...*ir.Tensor) {
	t.Helper()
	_, err := call(op, attrs, nOut, in...)
	require.Error(t, err)
	require.Equal(t, unsup, errors.Is(err, ir.ErrUnsupported), "error %v", err)
}

// a is shorthand for an attribute list.
func a(opts ...ir.AttrOption) []ir.AttrOption { return opts }

func nan() float64 { return math.NaN() }
