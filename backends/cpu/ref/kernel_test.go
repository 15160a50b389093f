package ref

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
)

func init() {
	// Test-only kernels; names chosen not to clash with real core ops.
	Register("TestNeg", func(ctx *Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		out := ir.NewTensor(in[0].DType, in[0].Shape)
		for i := 0; i < out.Len(); i++ {
			out.SetFloat64(i, -in[0].Float64(i))
		}
		return []*ir.Tensor{out}, nil
	})
	Register("TestPanic", func(ctx *Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		var s []int
		_ = s[3]
		return nil, nil
	})
	Register("TestTwoOutputs", func(ctx *Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		return []*ir.Tensor{in[0], in[0]}, nil
	})
	Register("TestBadBytes", func(ctx *Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
		return []*ir.Tensor{{DType: ir.Float32, Shape: []int64{2}, Data: make([]byte, 3)}}, nil
	})
}

func TestRunGraphAndErrors(t *testing.T) {
	g := ir.NewGraph("g")
	x := g.AddInput("x", ir.Float32, ir.S(2))
	n := g.AddNode("TestNeg", "neg", []*ir.Value{x}, 1, nil)
	g.Outputs = []*ir.Value{n.Outputs[0]}
	out, err := RunGraph(context.Background(), g, nil, []*ir.Tensor{ir.FromFloat32([]int64{2}, []float32{1, -3})})
	require.NoError(t, err)
	require.Equal(t, []float32{-1, 3}, out[0].Float32s())

	_, err = RunGraph(context.Background(), g, nil, nil)
	require.ErrorContains(t, err, "got 0 inputs, want 1")

	for _, tc := range []struct{ op, want string }{
		{"TestPanic", "kernel panicked"},
		{"TestTwoOutputs", "returned 2 outputs, want 1"},
		{"TestBadBytes", "3 bytes of data, want 8"},
		{"NoSuchOp", "no reference kernel for op NoSuchOp"},
	} {
		env := backends.NewEnv(nil)
		env.Set(x, ir.FromFloat32([]int64{2}, []float32{1, 2}))
		bad := &ir.Node{Name: "bad", Op: tc.op, Inputs: []*ir.Value{x}, Outputs: []*ir.Value{g.NewValue("", ir.Invalid, nil)}}
		err := RunNode(&Context{Env: env}, bad)
		require.ErrorContains(t, err, tc.want, tc.op)
		require.ErrorContains(t, err, `"bad"`)
		if tc.op == "NoSuchOp" {
			require.True(t, errors.Is(err, ir.ErrUnsupported))
		}
	}
	// an input without a value
	err = RunNode(&Context{Env: backends.NewEnv(nil)}, n)
	require.ErrorContains(t, err, "has no value")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = RunGraph(ctx, g, nil, []*ir.Tensor{ir.FromFloat32([]int64{2}, []float32{1, 2})})
	require.ErrorIs(t, err, context.Canceled)
}

func TestBroadcastHelpers(t *testing.T) {
	tests := []struct {
		a, b, want []int64
		err        bool
	}{
		{[]int64{2, 3, 4}, []int64{4}, []int64{2, 3, 4}, false},
		{[]int64{2, 1, 4}, []int64{3, 1}, []int64{2, 3, 4}, false},
		{[]int64{}, []int64{5}, []int64{5}, false},
		{[]int64{0, 3}, []int64{1, 3}, []int64{0, 3}, false},
		{[]int64{2, 3}, []int64{3, 2}, nil, true},
	}
	for _, tc := range tests {
		got, err := BroadcastShapes(tc.a, tc.b)
		if tc.err {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
	require.Equal(t, []int64{0, 1, 0}, BroadcastStrides([]int64{3, 1}, []int64{2, 3, 4}))
	// Walk [2,3] with a broadcast [3] operand: offsets 0,1,2,0,1,2.
	it := NewIndexer([]int64{2, 3}, BroadcastStrides([]int64{3}, []int64{2, 3}))
	var offs []int64
	for i := 0; i < 6; i++ {
		offs = append(offs, it.Offsets[0])
		it.Next()
	}
	require.Equal(t, []int64{0, 1, 2, 0, 1, 2}, offs)
	ax, err := NormAxes([]int64{-1, 0}, 3)
	require.NoError(t, err)
	require.Equal(t, []int{2, 0}, ax)
	_, err = NormAxes([]int64{1, -2}, 3)
	require.ErrorContains(t, err, "repeated")
	_, err = NormAxis(3, 3)
	require.Error(t, err)
	require.Equal(t, []int64{12, 4, 1}, Strides([]int64{2, 3, 4}))
}
