package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/scheduler"
)

// A family's measured rate (op_gflops) replaces the f32 peak for the ops
// of that family, and only for them; the estimate is the hand-derived
// roofline. (The comparison with measured latencies on real models is the
// command-level TestCostModelHonesty in cmd/weft.)
func TestOpFamilyRates(t *testing.T) {
	data := []byte(`{"name": "t", "devices": [{"name": "cpu", "kind": "cpu",
		"peak_gflops": {"f32": 100}, "op_gflops": {"matmul": 10, "conv": 5},
		"mem_bandwidth_gbs": 1000, "launch_overhead_us": 1, "host_visible": true, "source": "test"}]}`)
	p, err := scheduler.ParseProfile(data)
	require.NoError(t, err)
	dp := p.Device("cpu")

	b := ir.NewBuilder("g")
	x := b.Input("x", ir.Float32, ir.S(64, 128))
	w := b.Const("w", ir.NewTensor(ir.Float32, []int64{128, 256}))
	mm := b.Op("MatMul", x, w)
	mm.DType, mm.Shape = ir.Float32, ir.S(64, 256)
	relu := b.Op("Relu", mm)
	relu.DType, relu.Shape = ir.Float32, ir.S(64, 256)

	// MatMul: 2·64·128·256 FLOPs at 10 GFLOP/s = 419.4304 µs, plus 1 µs.
	flops := 2.0 * 64 * 128 * 256
	require.InDelta(t, flops/10e9*1e6+1, dp.NodeUs(mm.Producer), 1e-9)
	// Relu is in no family: 64·256 FLOPs at the 100 GFLOP/s peak, but its
	// traffic (2·64·256·4 bytes at 1000 GB/s) is what bounds it.
	reluBytes := 2.0 * 64 * 256 * 4
	require.InDelta(t, max(64*256/100e9, reluBytes/1000e9)*1e6+1, dp.NodeUs(relu.Producer), 1e-9)

	// A FusedMatMul with a Gelu: the multiply-adds and the bias at the
	// matmul rate, each output's Gelu at the act rate.
	dp.OpGFLOPS["act"] = 0.5
	fm := b.OpA("FusedMatMul", []ir.AttrOption{ir.Str("activation", "Gelu")}, x, w, b.Const("bias", ir.NewTensor(ir.Float32, []int64{256})))
	fm.DType, fm.Shape = ir.Float32, ir.S(64, 256)
	out := 64.0 * 256
	require.InDelta(t, (flops+out)/10e9*1e6+out/0.5e9*1e6+1, dp.NodeUs(fm.Producer), 1e-9)
	gelu := b.Op("Gelu", mm)
	gelu.DType, gelu.Shape = ir.Float32, ir.S(64, 256)
	require.InDelta(t, out/0.5e9*1e6+1, dp.NodeUs(gelu.Producer), 1e-9)
	delete(dp.OpGFLOPS, "act")

	// Without op_gflops the MatMul runs at the peak: 10× faster here.
	dp.OpGFLOPS = nil
	require.InDelta(t, flops/100e9*1e6+1, dp.NodeUs(mm.Producer), 1e-9)

	for _, bad := range []struct{ json, want string }{
		{`{"gemm": 1}`, `op_gflops has "gemm"`},
		{`{"conv": 0}`, "op_gflops.conv must be positive"},
	} {
		_, err := scheduler.ParseProfile([]byte(`{"name": "t", "devices": [{"name": "cpu", "kind": "cpu",
			"peak_gflops": {"f32": 100}, "op_gflops": ` + bad.json + `, "mem_bandwidth_gbs": 10,
			"launch_overhead_us": 1, "host_visible": true, "source": "test"}]}`))
		require.ErrorContains(t, err, bad.want)
	}
}
