//go:build cgo

package vulkan

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
)

// BenchmarkMatMul times one partition run of an n×n·n×n MatMul: upload,
// dispatch, download (on lavapipe this measures the CPU driver).
func BenchmarkMatMul(b *testing.B) {
	for _, n := range []int64{64, 256, 512} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			d := testDeviceB(b)
			g, vals := oneNode(b, 1, "MatMul", nil, in(n, n), konst(n, n))
			exe, err := d.Compile(wholePartition(g))
			require.NoError(b, err)
			defer exe.(*executable).Close()
			env := backends.NewEnv(nil)
			env.Set(g.Inputs[0], vals[g.Inputs[0]])
			b.SetBytes(int64(4 * n * n))
			b.ResetTimer()
			for b.Loop() {
				if err := exe.Run(context.Background(), env); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(2*n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func testDeviceB(b *testing.B) *device {
	devs, _ := theBackend.Devices()
	if len(devs) == 0 {
		b.Skipf("no Vulkan device: %s", Unavailable())
	}
	return devs[0].(*device)
}

// BenchmarkQMatMul times one partition run of a decode GEMV (one row of X)
// against a 1024×1024 block-quantized weight dequantized in the shader.
func BenchmarkQMatMul(b *testing.B) {
	const n = 1024
	for _, dt := range []ir.DType{ir.Q8_0, ir.Q4_0} {
		b.Run(dt.String(), func(b *testing.B) {
			d := testDeviceB(b)
			g, vals := qmatmulGraph(b, 1, []int64{1, n}, n, n, dt, false)
			exe, err := d.Compile(wholePartition(g))
			require.NoError(b, err)
			defer exe.(*executable).Close()
			env := backends.NewEnv(nil)
			env.Set(g.Inputs[0], vals[g.Inputs[0]])
			b.SetBytes(dt.Bytes(n * n))
			b.ResetTimer()
			for b.Loop() {
				if err := exe.Run(context.Background(), env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMatMulPrecision times an n×n·n×n MatMul in each precision
// variant, in one binary so that they compare under the same load: f32,
// f32 with f16-stored weights (the opt-in), f16 storage with f32 sums, and
// f16 tile arithmetic. Variants the device lacks are skipped.
func BenchmarkMatMulPrecision(b *testing.B) {
	const n = 256
	d := testDeviceB(b)
	for _, c := range []struct {
		name    string
		dt      ir.DType
		q       Quirks
		enabled bool
	}{
		{"f32", ir.Float32, Quirks{}, true},
		{"f32-f16weights", ir.Float32, Quirks{F16Storage: true, F16Weights: true}, d.quirks.F16Storage},
		{"f16-storage", ir.Float16, Quirks{F16Storage: true}, d.quirks.F16Storage},
		{"f16-arith", ir.Float16, Quirks{F16Storage: true, F16Arith: true}, d.quirks.F16Storage && d.quirks.F16Arith},
	} {
		b.Run(c.name, func(b *testing.B) {
			if !c.enabled {
				b.Skipf("%s lacks this precision", d.name)
			}
			g, vals := oneNode(b, 1, "MatMul", nil, in(n, n), konst(n, n))
			if c.dt == ir.Float16 {
				for _, v := range append(append([]*ir.Value{}, g.Inputs...), g.Consts...) {
					h := ir.NewTensor(ir.Float16, v.Shape.Ints())
					src := v.Const
					if src == nil {
						src = vals[v]
					}
					for i := 0; i < h.Len(); i++ {
						h.SetFloat64(i, src.Float64(i))
					}
					v.DType = ir.Float16
					if v.Const != nil {
						v.Const = h
					}
					vals[v] = h
				}
				g.Outputs[0].DType = ir.Float16
			}
			old := d.quirks
			d.quirks = c.q
			exe, err := d.Compile(wholePartition(g))
			d.quirks = old
			require.NoError(b, err)
			defer exe.(*executable).Close()
			env := backends.NewEnv(nil)
			env.Set(g.Inputs[0], vals[g.Inputs[0]])
			b.ResetTimer()
			for b.Loop() {
				if err := exe.Run(context.Background(), env); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(2*n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
