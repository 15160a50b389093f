package cpu_test

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime"
)

func TestZZZoo(t *testing.T) {
	for _, name := range []string{"resnet18", "resnet50", "bert-4l", "gpt-6l"} {
		path := "/tmp/z_" + name + ".onnx"
		if _, err := os.Stat(path); err != nil {
			continue
		}
		m, err := weft.Open(path, weft.Options{OptLevel: 2})
		require.NoError(t, err)
		inputs := map[string]*ir.Tensor{}
		var inl []*ir.Tensor
		for _, v := range m.Inputs() {
			x := ir.NewTensor(v.DType, v.Shape.Ints())
			for i := 0; i < x.Len(); i++ {
				if v.DType.IsFloat() {
					x.SetFloat64(i, math.Sin(float64(i)))
				} else {
					x.SetInt64(i, int64(i%7))
				}
			}
			inputs[v.Name] = x
			inl = append(inl, x)
		}
		plain, err := runtime.NewSession(m.Plan, []backends.Device{plainDevice{cpuDevice(t)}})
		require.NoError(t, err)
		t0 := time.Now()
		want, err := plain.Run(context.Background(), inputs)
		require.NoError(t, err)
		t1 := time.Now()
		got, err := m.Run(context.Background(), inputs)
		require.NoError(t, err)
		t2 := time.Now()
		got2, err := m.Run(context.Background(), inputs)
		require.NoError(t, err)
		t3 := time.Now()
		var maxd float64
		for k, w := range want {
			for _, g := range []*ir.Tensor{got[k], got2[k]} {
				require.Equal(t, w.Shape, g.Shape)
				for i := 0; i < w.Len(); i++ {
					d := math.Abs(w.Float64(i)-g.Float64(i)) / math.Max(1, math.Abs(w.Float64(i)))
					maxd = max(maxd, d)
				}
			}
		}
		outs := make([]*ir.Tensor, len(m.Outputs()))
		for i, o := range m.Outputs() {
			outs[i] = ir.NewTensor(o.DType, o.Shape.Ints())
		}
		require.NoError(t, m.Session.RunInto(context.Background(), inl, outs))
		allocs := testing.AllocsPerRun(2, func() { _ = m.Session.RunInto(context.Background(), inl, outs) })
		t.Logf("%s: max rel diff %.2g; reference %v, planned first %v, second %v; allocs/RunInto %v", name, maxd, t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), allocs)
	}
}
