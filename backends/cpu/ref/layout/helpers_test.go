package layout

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// allDTypes are the dtypes the pure data-movement tests run on.
var allDTypes = []ir.DType{
	ir.Float32, ir.Float64, ir.Float16, ir.BFloat16,
	ir.Int8, ir.Int16, ir.Int32, ir.Int64,
	ir.Uint8, ir.Uint16, ir.Uint32, ir.Uint64, ir.Bool,
}

// runOp runs op on the given inputs (nil: an absent optional input) with
// nOut outputs, the way a graph evaluator would.
func runOp(op string, attrs ir.Attrs, nOut int, in ...*ir.Tensor) ([]*ir.Tensor, error) {
	g := ir.NewGraph("test")
	env := backends.NewEnv(nil)
	vals := make([]*ir.Value, len(in))
	for i, t := range in {
		if t == nil {
			continue
		}
		vals[i] = g.AddInput("", t.DType, ir.ShapeOf(t.Shape))
		env.Set(vals[i], t)
	}
	n := g.AddNode(op, "n", vals, nOut, attrs)
	if err := ref.RunNode(&ref.Context{Env: env}, n); err != nil {
		if strings.Contains(err.Error(), "kernel panicked") {
			panic(err) // bad input must be an error, never a panic
		}
		return nil, err
	}
	out := make([]*ir.Tensor, nOut)
	for i, v := range n.Outputs {
		out[i] = env.Get(v)
	}
	return out, nil
}

// run1 runs a single-output op and fails the test on error.
func run1(t *testing.T, op string, attrs ir.Attrs, in ...*ir.Tensor) *ir.Tensor {
	t.Helper()
	out, err := runOp(op, attrs, 1, in...)
	require.NoError(t, err)
	return out[0]
}

// attrs collects attribute options into an Attrs map.
func attrs(opts ...ir.AttrOption) ir.Attrs {
	a := ir.Attrs{}
	for _, o := range opts {
		o(a)
	}
	return a
}

// tens builds a tensor of dtype dt from float64 values; for bool, odd
// values become true, so one set of small integers serves every dtype.
func tens(dt ir.DType, shape []int64, vals ...float64) *ir.Tensor {
	if dt == ir.Bool {
		b := make([]float64, len(vals))
		for i, v := range vals {
			b[i] = float64(int64(v) & 1)
		}
		vals = b
	}
	if vals == nil {
		vals = []float64{}
	}
	return ir.FromFloat64(dt, shape, vals)
}

// i64 builds an Int64 tensor.
func i64(shape []int64, vals ...int64) *ir.Tensor {
	if vals == nil {
		vals = []int64{}
	}
	return ir.FromInt64(shape, vals)
}

// i32 builds an Int32 tensor.
func i32(shape []int64, vals ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Int32, shape)
	for i, v := range vals {
		t.SetInt64(i, v)
	}
	return t
}

// f32 builds a Float32 tensor.
func f32(shape []int64, vals ...float64) *ir.Tensor { return tens(ir.Float32, shape, vals...) }

// sh is shorthand for a shape literal.
func sh(dims ...int64) []int64 {
	if dims == nil {
		return []int64{}
	}
	return dims
}

// seq returns 0, 1, ..., n-1 as float64s.
func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return v
}

// requireTensor checks dtype, shape and the exact bytes of got.
func requireTensor(t *testing.T, want, got *ir.Tensor, msgs ...any) {
	t.Helper()
	require.NotNil(t, got, msgs...)
	require.Equal(t, want.DType, got.DType, msgs...)
	require.Equal(t, sh(want.Shape...), sh(got.Shape...), msgs...)
	if want.DType == ir.Bool || !want.DType.IsFloat() {
		require.Equal(t, want.Int64s(), got.Int64s(), msgs...)
	} else {
		w, g := make([]float64, want.Len()), make([]float64, got.Len())
		for i := range w {
			w[i], g[i] = want.Float64(i), got.Float64(i)
		}
		require.Equal(t, w, g, msgs...)
	}
	require.Equal(t, want.Data, got.Data, msgs...)
}

// moveCase is a data-movement test written once in small integers and run
// for every dtype: inputs[0] (and want) take the dtype under test, the other
// inputs are index/shape tensors used as given.
type moveCase struct {
	name    string
	attrs   ir.Attrs
	shape   []int64   // shape of the data input
	data    []float64 // nil: seq(prod(shape))
	extra   []*ir.Tensor
	wantSh  []int64
	want    []float64
	wantErr bool
}

// runMoveCases runs each case on every dtype in allDTypes.
func runMoveCases(t *testing.T, op string, cases []moveCase) {
	t.Helper()
	for _, c := range cases {
		for _, dt := range allDTypes {
			data := c.data
			if data == nil {
				data = seq(int(ir.NumElements(c.shape)))
			}
			in := append([]*ir.Tensor{tens(dt, c.shape, data...)}, c.extra...)
			out, err := runOp(op, c.attrs, 1, in...)
			if c.wantErr {
				require.Error(t, err, "%s/%v", c.name, dt)
				continue
			}
			require.NoError(t, err, "%s/%v", c.name, dt)
			requireTensor(t, tens(dt, c.wantSh, c.want...), out[0], "%s/%v", c.name, dt)
		}
	}
}

func TestAllOpsRegistered(t *testing.T) {
	ops := []string{
		"Reshape", "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND",
		"ScatterElements", "ScatterND", "Pad", "Tile", "Expand", "Squeeze", "Unsqueeze", "Flatten",
		"Shape", "Size", "ConstantOfShape", "Range", "OneHot", "DepthToSpace", "SpaceToDepth", "Trilu",
		"EyeLike", "NonZero", "Compress", "Unique", "TopK", "CumSum", "ReverseSequence", "CenterCropPad",
	}
	for _, op := range ops {
		_, ok := ref.Lookup(op)
		require.True(t, ok, op)
	}
}

func TestMissingInputsAreErrors(t *testing.T) {
	// Every kernel must answer a node without inputs with an error.
	for _, op := range []string{"Reshape", "Transpose", "Split", "Slice", "Gather", "GatherND",
		"ScatterElements", "ScatterND", "Pad", "Tile", "Expand", "Squeeze", "Flatten", "Shape", "Size",
		"ConstantOfShape", "Range", "OneHot", "DepthToSpace", "Trilu", "EyeLike", "NonZero", "Compress",
		"Unique", "TopK", "CumSum", "ReverseSequence", "CenterCropPad", "Concat"} {
		_, err := runOp(op, nil, 1)
		require.Error(t, err, op)
	}
}
