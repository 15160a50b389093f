package scheduler_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/scheduler"
	"github.com/weftrt/weft/scheduler/profiles"
)

func TestBundledProfiles(t *testing.T) {
	names := profiles.Names()
	require.Equal(t, []string{"apple-m2", "dimensity-9000", "snapdragon-7-plus-gen-2", "snapdragon-8-gen-2", "snapdragon-8-gen-3"}, names)
	for _, name := range names {
		p, err := scheduler.LoadProfile(name)
		require.NoError(t, err, name)
		require.Equal(t, name, p.Name)
		var kinds []string
		for _, d := range p.Devices {
			kinds = append(kinds, d.Kind)
			require.NotEmpty(t, d.Source, "%s/%s", name, d.Name)
			require.NotEmpty(t, d.Model, "%s/%s", name, d.Name)
			// A GPU entry is faster at f32 than the CPU of its SoC.
			if d.Kind == "gpu" {
				require.Greater(t, d.PeakGFLOPS["f32"], p.Devices[0].PeakGFLOPS["f32"], name)
			}
		}
		require.Equal(t, []string{"cpu", "gpu"}, kinds, name)
	}
	// The figures that are published are the published ones.
	sd, err := scheduler.LoadProfile("snapdragon-8-gen-2")
	require.NoError(t, err)
	require.Equal(t, 3700.0, sd.Device("vulkan:0").PeakGFLOPS["f32"])
	m2, err := scheduler.LoadProfile("apple-m2")
	require.NoError(t, err)
	require.Equal(t, 3600.0, m2.Device("vulkan:0").PeakGFLOPS["f32"])
	require.Equal(t, 100.0, m2.Device("vulkan:0").MemBandwidthGBs)
	require.True(t, m2.Device("vulkan:0").HostVisible)
	require.Contains(t, sd.Device("cpu").Model, "Cortex-X3 @3.2 GHz")
}

func TestProfileErrors(t *testing.T) {
	good := `{"name":"x","devices":[{"name":"cpu","kind":"cpu","peak_gflops":{"f32":1},"mem_bandwidth_gbs":1,"host_visible":true,"source":"s"}]}`
	_, err := scheduler.ParseProfile([]byte(good))
	require.NoError(t, err)
	for _, tc := range []struct{ from, to, want string }{
		{`"name":"x"`, `"name":""`, "no name"},
		{`"kind":"cpu"`, `"kind":"npu"`, `kind "npu"`},
		{`{"f32":1}`, `{"f16":1}`, "peak_gflops.f32 must be positive"},
		{`{"f32":1}`, `{"f32":1,"fp8":2}`, `peak_gflops has "fp8"`},
		{`"mem_bandwidth_gbs":1`, `"mem_bandwidth_gbs":0`, "mem_bandwidth_gbs must be positive"},
		{`"host_visible":true`, `"host_visible":false`, "needs positive to_host_gbs"},
		{`"source":"s"`, `"source":""`, "no source"},
		{`"source":"s"`, `"source":"s","bandwith":3`, `unknown field "bandwith"`},
	} {
		_, err := scheduler.ParseProfile([]byte(strings.Replace(good, tc.from, tc.to, 1)))
		require.ErrorContains(t, err, tc.want)
	}
	path := filepath.Join(t.TempDir(), "p.json")
	require.NoError(t, os.WriteFile(path, []byte(good), 0o644))
	p, err := scheduler.LoadProfile(path)
	require.NoError(t, err)
	require.Equal(t, "x", p.Name)
	_, err = scheduler.LoadProfile(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorContains(t, err, "missing.json")
	_, err = scheduler.LoadProfile("pixel-99")
	require.ErrorContains(t, err, `no bundled profile "pixel-99" (have: apple-m2`)
}

func TestProfileDevice(t *testing.T) {
	sd, err := scheduler.LoadProfile("snapdragon-8-gen-2")
	require.NoError(t, err)
	gpu := scheduler.NewProfileDevice(*sd.Device("vulkan:0"), nil)
	require.Equal(t, "vulkan:0", gpu.Name())
	require.Equal(t, backends.GPU, gpu.Kind())
	require.False(t, gpu.HostVisible())
	require.NoError(t, gpu.Supports(&ir.Node{Op: "MatMul"}))
	require.NoError(t, gpu.Supports(&ir.Node{Op: ir.OpTransfer}))
	require.ErrorIs(t, gpu.Supports(&ir.Node{Op: "Loop"}), ir.ErrUnsupported)
	_, err = gpu.Compile(nil)
	require.ErrorContains(t, err, "profile stand-in")
	cpu := scheduler.NewProfileDevice(*sd.Device("cpu"), []string{"Gather"})
	require.NoError(t, cpu.Supports(&ir.Node{Op: "Gather"}))
	require.Error(t, cpu.Supports(&ir.Node{Op: "MatMul"}))
}

// A lookup in a constant table reads the rows it returns, not the table.
func TestGatherCost(t *testing.T) {
	b := ir.NewBuilder("emb")
	ids := b.Input("ids", ir.Int64, ir.S(4))
	table := b.Const("table", ir.NewTensor(ir.Float32, []int64{1000, 64}))
	b.Output("y", b.Op("Gather", table, ids))
	g, err := b.Build()
	require.NoError(t, err)
	g.Nodes[0].Outputs[0].DType, g.Nodes[0].Outputs[0].Shape = ir.Float32, ir.S(4, 64)
	cpu := profile(1, 1, false).Devices[0] // 10 GB/s, 1 µs launch
	bytes := 4*8 + 2*4*64*4                // ids, rows read, rows written
	require.InDelta(t, float64(bytes)/10e9*1e6+1, cpu.NodeUs(g.Nodes[0]), 1e-9)
}
