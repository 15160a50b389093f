package control

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Test-only kernels under names no real op uses, so these tests do not
// depend on the elementwise package.
func init() {
	// test.Add: broadcasting addition in float64, result in input 0's dtype.
	ref.Register("test.Add", func(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		shape, err := ref.BroadcastShapes(in[0].Shape, in[1].Shape)
		if err != nil {
			return nil, err
		}
		out := ir.NewTensor(in[0].DType, shape)
		it := ref.NewIndexer(shape, ref.BroadcastStrides(in[0].Shape, shape), ref.BroadcastStrides(in[1].Shape, shape))
		for i := 0; i < out.Len(); i++ {
			out.SetFloat64(i, in[0].Float64(int(it.Offsets[0]))+in[1].Float64(int(it.Offsets[1])))
			it.Next()
		}
		return []*ir.Tensor{out}, nil
	})
	// test.Less: scalar a < b as a bool scalar.
	ref.Register("test.Less", func(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		return []*ir.Tensor{boolScalar(in[0].Float64(0) < in[1].Float64(0))}, nil
	})
	// test.Alias returns its input object itself, like a careless Identity,
	// so the tests see whether control flow copies what it hands on.
	ref.Register("test.Alias", func(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		return []*ir.Tensor{in[0]}, nil
	})
}

// run binds the graph inputs of g to ins, runs node n and returns its outputs.
func run(t *testing.T, g *ir.Graph, n *ir.Node, ins ...*ir.Tensor) ([]*ir.Tensor, error) {
	t.Helper()
	require.Len(t, ins, len(g.Inputs))
	env := backends.NewEnv(nil)
	for i, v := range g.Inputs {
		env.Set(v, ins[i])
	}
	for _, c := range g.Consts {
		env.Set(c, c.Const)
	}
	if err := ref.RunNode(&ref.Context{Env: env}, n); err != nil {
		return nil, err
	}
	out := make([]*ir.Tensor, len(n.Outputs))
	for i, v := range n.Outputs {
		out[i] = env.Get(v)
	}
	return out, nil
}

func f32(shape []int64, v ...float32) *ir.Tensor { return ir.FromFloat32(shape, v) }
func i64(shape []int64, v ...int64) *ir.Tensor   { return ir.FromInt64(shape, v) }
func boolT(b bool) *ir.Tensor                    { return boolScalar(b) }

// floats reads a tensor's elements as float64s.
func floats(t *ir.Tensor) []float64 {
	out := make([]float64, t.Len())
	for i := range out {
		out[i] = t.Float64(i)
	}
	return out
}

func TestStackAndSlice(t *testing.T) {
	a := f32([]int64{2, 2}, 1, 2, 3, 4)
	b := f32([]int64{2, 2}, 5, 6, 7, 8)
	tests := []struct {
		axis    int
		reverse bool
		shape   []int64
		want    []float64
	}{
		{0, false, []int64{2, 2, 2}, []float64{1, 2, 3, 4, 5, 6, 7, 8}},
		{1, false, []int64{2, 2, 2}, []float64{1, 2, 5, 6, 3, 4, 7, 8}},
		{2, false, []int64{2, 2, 2}, []float64{1, 5, 2, 6, 3, 7, 4, 8}},
		{0, true, []int64{2, 2, 2}, []float64{5, 6, 7, 8, 1, 2, 3, 4}},
		{2, true, []int64{2, 2, 2}, []float64{5, 1, 6, 2, 7, 3, 8, 4}},
	}
	for _, tc := range tests {
		s, err := stack([]*ir.Tensor{a, b}, tc.axis, tc.reverse)
		require.NoError(t, err)
		require.Equal(t, tc.shape, s.Shape)
		require.Equal(t, tc.want, floats(s))
	}
	x := f32([]int64{2, 3}, 1, 2, 3, 4, 5, 6)
	require.Equal(t, []float64{2, 5}, floats(sliceAt(x, 1, 1)))
	require.Equal(t, []float64{4, 5, 6}, floats(sliceAt(x, 0, 1)))

	_, err := stack([]*ir.Tensor{a, f32([]int64{4}, 1, 2, 3, 4)}, 0, false)
	require.Error(t, err)
	_, err = stack([]*ir.Tensor{a}, 3, false)
	require.Error(t, err)
}
