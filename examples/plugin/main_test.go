package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/examples/plugin/toyaccel"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// The example program runs end to end: the toy takes the ops it supports,
// the broadcast Add falls back with its reason, and the outputs equal the
// CPU's.
func TestPluginExample(t *testing.T) {
	var sb strings.Builder
	require.NoError(t, run(&sb))
	out := sb.String()
	require.Contains(t, out, "partition 1 on toy:0: 4 nodes")
	require.Contains(t, out, "toy does not broadcast: Add of [4,6] and [6]")
	require.Contains(t, out, "toy has no MatMul kernel")
	require.Contains(t, out, "matches the CPU exactly")
	require.NotContains(t, out, "(0 of 24 elements nonzero)", "a result of zeros would prove little")
}

// The toy's Supports answers with reasons that wrap ir.ErrUnsupported.
func TestToySupports(t *testing.T) {
	b, ok := backends.Get("toy")
	require.True(t, ok, "importing toyaccel registers it")
	ds, err := b.Devices()
	require.NoError(t, err)
	d := ds[0]
	require.Equal(t, toyaccel.DeviceName, d.Name())
	require.True(t, d.HostVisible())

	bl := ir.NewBuilder("s")
	x := bl.Input("x", ir.Float32, ir.S(2, 3))
	xi := bl.Input("xi", ir.Int64, ir.S(2, 3))
	row := bl.Input("row", ir.Float32, ir.S(3))
	dyn := bl.Input("dyn", ir.Float32, ir.Shape{ir.Sym("n")})
	for _, tc := range []struct {
		op   string
		in   []*ir.Value
		want string
	}{
		{"Add", []*ir.Value{x, x}, ""},
		{"Relu", []*ir.Value{x}, ""},
		{"Sub", []*ir.Value{x, x}, "toy has no Sub kernel"},
		{"Add", []*ir.Value{xi, xi}, "f32 only"},
		{"Mul", []*ir.Value{x, row}, "does not broadcast"},
		{"Relu", []*ir.Value{dyn}, "static shapes"},
	} {
		y := bl.Op(tc.op, tc.in...)
		y.DType, y.Shape = tc.in[0].DType, tc.in[0].Shape
		err := d.Supports(y.Producer)
		if tc.want == "" {
			require.NoError(t, err, tc.op)
			continue
		}
		require.ErrorIs(t, err, ir.ErrUnsupported)
		require.ErrorContains(t, err, tc.want)
	}
	// Run computes, and checks the tensors it is given, not only the
	// declared shapes.
	y := bl.Op("Add", x, x)
	y.DType, y.Shape = ir.Float32, ir.S(2, 3)
	exe, err := d.Compile(&plan.Partition{Device: d.Name(), Nodes: []*ir.Node{y.Producer}})
	require.NoError(t, err)
	env := backends.NewEnv(nil)
	env.Set(x, ir.FromFloat32([]int64{2, 3}, []float32{1, -2, 3, -4, 5, 0.5}))
	require.NoError(t, exe.Run(context.Background(), env))
	require.Equal(t, []float32{2, -4, 6, -8, 10, 1}, env.Get(y).Float32s())
	env.Set(x, ir.NewTensor(ir.Int64, []int64{2, 3}))
	require.ErrorContains(t, exe.Run(context.Background(), env), "want f32 tensors of one shape")

	sub := bl.Op("Sub", x, x)
	_, err = d.Compile(&plan.Partition{Device: d.Name(), Nodes: []*ir.Node{sub.Producer}})
	require.ErrorIs(t, err, ir.ErrUnsupported)
}
