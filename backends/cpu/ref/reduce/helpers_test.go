package reduce

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// runOp runs the registered kernel of op on a node with nOut outputs and the
// given attributes.
func runOp(t *testing.T, op string, nOut int, attrs []ir.AttrOption, in ...*ir.Tensor) ([]*ir.Tensor, error) {
	t.Helper()
	k, ok := ref.Lookup(op)
	require.True(t, ok, "no kernel for %s", op)
	n := &ir.Node{Op: op, Attrs: ir.Attrs{}}
	for _, a := range attrs {
		a(n.Attrs)
	}
	for i := 0; i < nOut; i++ {
		n.Outputs = append(n.Outputs, &ir.Value{ID: i})
	}
	out, err := k(&ref.Context{}, n, in)
	if err == nil {
		require.Len(t, out, nOut)
		for _, o := range out {
			require.NoError(t, o.Check())
		}
	}
	return out, err
}

// mustRun is runOp that requires success and returns the first output.
func mustRun(t *testing.T, op string, attrs []ir.AttrOption, in ...*ir.Tensor) *ir.Tensor {
	t.Helper()
	out, err := runOp(t, op, 1, attrs, in...)
	require.NoError(t, err)
	return out[0]
}

// f builds a tensor of dtype dt from float64 values.
func f(dt ir.DType, shape []int64, vals ...float64) *ir.Tensor {
	return ir.FromFloat64(dt, shape, vals)
}

// i64 builds an i64 tensor.
func i64(shape []int64, vals ...int64) *ir.Tensor { return ir.FromInt64(shape, vals) }

// ints builds an integer (or bool) tensor of dtype dt from int64 values.
func ints(dt ir.DType, shape []int64, vals ...int64) *ir.Tensor {
	t := ir.NewTensor(dt, shape)
	for i, v := range vals {
		t.SetInt64(i, v)
	}
	if len(vals) != t.Len() {
		panic("ints: wrong number of values")
	}
	return t
}

// sh is shorthand for a shape.
func sh(d ...int64) []int64 { return append([]int64{}, d...) }

// requireClose checks dtype, shape and values within a relative/absolute
// tolerance tol (NaN matches NaN, infinities must match exactly).
func requireClose(t *testing.T, got *ir.Tensor, dt ir.DType, shape []int64, want []float64, tol float64) {
	t.Helper()
	require.Equal(t, dt, got.DType, "dtype")
	require.Equal(t, shape, got.Shape, "shape")
	require.Equal(t, len(want), got.Len(), "length")
	for i, w := range want {
		g := got.Float64(i)
		switch {
		case math.IsNaN(w):
			require.True(t, math.IsNaN(g), "element %d: got %v, want NaN", i, g)
		case math.IsInf(w, 0):
			require.Equal(t, w, g, "element %d", i)
		default:
			require.InDelta(t, w, g, tol*(1+math.Abs(w)), "element %d: got %v, want %v", i, g, w)
		}
	}
}

// requireInts checks dtype, shape and exact integer values.
func requireInts(t *testing.T, got *ir.Tensor, dt ir.DType, shape []int64, want ...int64) {
	t.Helper()
	require.Equal(t, dt, got.DType, "dtype")
	require.Equal(t, shape, got.Shape, "shape")
	require.Equal(t, want, got.Int64s())
}

// tolFor is a comparison tolerance that suits the precision of dt.
func tolFor(dt ir.DType) float64 {
	switch dt {
	case ir.Float16:
		return 2e-3
	case ir.BFloat16:
		return 1e-2
	case ir.Float32:
		return 1e-6
	}
	return 1e-12
}

var (
	inf    = math.Inf(1)
	nan    = math.NaN()
	floats = []ir.DType{ir.Float32, ir.Float64, ir.Float16, ir.BFloat16}
)

// errorsIsUnsupported reports whether err wraps ir.ErrUnsupported.
func errorsIsUnsupported(err error) bool { return errors.Is(err, ir.ErrUnsupported) }
