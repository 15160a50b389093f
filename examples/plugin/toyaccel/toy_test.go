package toyaccel_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	_ "github.com/weftrt/weft/backends/cpu" // registers the reference kernels
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/examples/plugin/toyaccel"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// TestDifferential is the test every backend should run: each op the
// device claims, on random inputs of several shapes, compiled and run on
// the device and compared with the reference kernels (the oracle), with a
// per-op error limit (exact here: the toy does the same f32 arithmetic).
func TestDifferential(t *testing.T) {
	bk, ok := backends.Get("toy")
	require.True(t, ok)
	devs, err := bk.Devices()
	require.NoError(t, err)
	dev := devs[0]
	require.Equal(t, toyaccel.DeviceName, dev.Name())
	r := rand.New(rand.NewPCG(1, 2))
	for _, op := range []string{"Relu", "Add", "Mul"} {
		for _, shape := range [][]int64{{1}, {7}, {3, 5}, {2, 3, 4, 5}, {0, 4}} {
			b := ir.NewBuilder(op)
			var ins []*ir.Value
			var ts []*ir.Tensor
			for k := range map[string]int{"Relu": 1, "Add": 2, "Mul": 2}[op] {
				ins = append(ins, b.Input(string(rune('a'+k)), ir.Float32, ir.S(shape...)))
				x := ir.NewTensor(ir.Float32, shape)
				for i := range x.Float32s() {
					x.Float32s()[i] = float32(r.NormFloat64())
				}
				ts = append(ts, x)
			}
			y := b.Op(op, ins...)
			y.DType, y.Shape = ir.Float32, ir.S(shape...)
			n := y.Producer
			require.NoError(t, dev.Supports(n), "%s%v", op, shape)

			exe, err := dev.Compile(&plan.Partition{Device: dev.Name(), Nodes: []*ir.Node{n}})
			require.NoError(t, err)
			env := envOf(ins, ts)
			require.NoError(t, exe.Run(context.Background(), env))
			got := env.Get(y)

			refEnv := envOf(ins, ts)
			require.NoError(t, ref.RunNode(&ref.Context{Ctx: context.Background(), Env: refEnv}, n))
			exp := refEnv.Get(y)
			require.Equal(t, exp.Shape, got.Shape, "%s%v", op, shape)
			require.Equal(t, exp.Float32s(), got.Float32s(), "%s%v", op, shape)
		}
	}
}

func envOf(vs []*ir.Value, ts []*ir.Tensor) *backends.Env {
	env := backends.NewEnv(nil)
	for i, v := range vs {
		env.Set(v, ts[i])
	}
	return env
}
