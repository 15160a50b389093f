package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

func TestIm2colBytes(t *testing.T) {
	b := ir.NewBuilder("c")
	x := b.Input("x", ir.Float32, ir.S(1, 3, 96, 96))
	w7 := b.Const("w7", ir.NewTensor(ir.Float32, []int64{16, 3, 7, 7}))
	w1 := b.Const("w1", ir.NewTensor(ir.Float32, []int64{16, 3, 1, 1}))
	stem := b.OpA("Conv", []ir.AttrOption{ir.Ints("strides", 2, 2), ir.Ints("pads", 3, 3, 3, 3)}, x, w7)
	stem.DType, stem.Shape = ir.Float32, ir.S(1, 16, 48, 48)
	pw := b.Op("Conv", x, w1)
	pw.DType, pw.Shape = ir.Float32, ir.S(1, 16, 96, 96)
	// 3·7·7 = 147 rows × 48·48 pixels, written once and read twice, 4 bytes each.
	require.Equal(t, int64(3*4*147*2304), im2colBytes(stem.Producer))
	require.Zero(t, im2colBytes(pw.Producer), "1×1 stride-1 convs need no lowering")
	cpu := &DeviceProfile{Name: "cpu", Kind: "cpu", PeakGFLOPS: map[string]float64{"f32": 100}, MemBandwidthGBs: 10}
	gpu := &DeviceProfile{Name: "gpu", Kind: "gpu", PeakGFLOPS: map[string]float64{"f32": 100}, MemBandwidthGBs: 10}
	require.InDelta(t, float64(3*4*147*2304)/10e9*1e6, cpu.NodeUs(stem.Producer)-gpu.NodeUs(stem.Producer), 1e-6,
		"only the CPU pays for lowering")
}
