package scheduler_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
	"github.com/weftrt/weft/runtime"
	"github.com/weftrt/weft/scheduler"
)

// profile returns a cpu + gpu profile: the GPU 10× the CPU's FLOP/s and
// bandwidth, with the given transfer latency (µs) and link bandwidth (GB/s).
func profile(latencyUs, linkGBs float64, gpuHostVisible bool) *scheduler.Profile {
	return &scheduler.Profile{Name: "test", Devices: []scheduler.DeviceProfile{
		{Name: "cpu", Kind: "cpu", PeakGFLOPS: map[string]float64{"f32": 10}, MemBandwidthGBs: 10,
			LaunchOverheadUs: 1, HostVisible: true, Source: "test"},
		{Name: "gpu:0", Kind: "gpu", PeakGFLOPS: map[string]float64{"f32": 100}, MemBandwidthGBs: 100,
			LaunchOverheadUs: 1, TransferLatencyUs: latencyUs, ToHostGBs: linkGBs, FromHostGBs: linkGBs,
			HostVisible: gpuHostVisible, Source: "test"},
	}}
}

// gpuOps is what the fake GPU runs: no Erf.
var gpuOps = []string{"MatMul", "Relu", "Add", "Mul"}

func devices(res *residency, gpuHostVisible bool) []backends.Device {
	return []backends.Device{
		newFake(res, "cpu", backends.CPU, true),
		newFake(res, "gpu:0", backends.GPU, gpuHostVisible, gpuOps...),
	}
}

// placed maps node names to their placement (transfers excluded).
func placed(r *scheduler.Report) map[string]scheduler.Placement {
	m := map[string]scheduler.Placement{}
	for _, p := range r.Placements {
		if p.Cause != scheduler.CauseTransfer {
			m[p.Node.Name] = p
		}
	}
	return m
}

func TestCostModel(t *testing.T) {
	p := profile(20, 10, false)
	cpu, gpu := &p.Devices[0], &p.Devices[1]
	g := mlp(t, 64, 256, 256)
	mm := g.Nodes[0]
	// 2·64·256·256 FLOPs; bytes = x 64 KiB + w1 256 KiB + out 64 KiB.
	c := scheduler.NodeCost(mm)
	require.Equal(t, int64(2*64*256*256), c.FLOPs)
	require.Equal(t, int64(4*(64*256+256*256+64*256)), c.Bytes)
	require.InDelta(t, float64(c.FLOPs)/10e9*1e6+1, cpu.NodeUs(mm), 1e-9) // compute-bound
	require.InDelta(t, float64(c.FLOPs)/100e9*1e6+1, gpu.NodeUs(mm), 1e-9)
	relu := g.Nodes[1] // 16384 FLOPs, 128 KiB: memory-bound on both
	require.InDelta(t, 2*64*256*4/10e9*1e6+1, cpu.NodeUs(relu), 1e-9)

	require.Zero(t, scheduler.TransferUs(1e6, nil, cpu))
	require.Zero(t, scheduler.TransferUs(1e6, cpu, cpu))
	require.InDelta(t, 20+1e6/10e9*1e6, scheduler.TransferUs(1e6, nil, gpu), 1e-9)
	require.InDelta(t, 20+1e6/10e9*1e6, scheduler.TransferUs(1e6, gpu, cpu), 1e-9)
	require.True(t, scheduler.Compatible(cpu, nil))
	require.False(t, scheduler.Compatible(gpu, cpu))
	gpu.HostVisible = true
	require.Zero(t, scheduler.TransferUs(1e6, gpu, cpu))
}

func TestPlacement(t *testing.T) {
	tests := []struct {
		name      string
		m, k      int64
		latency   float64
		threshold int64
		want      map[string]string // node -> device
		causes    map[string]scheduler.Cause
	}{
		{name: "fast GPU, cheap transfers: matmuls on the GPU", m: 64, k: 256, latency: 1,
			want:   map[string]string{"/layers.0/MatMul": "gpu:0", "/layers.0/Relu": "gpu:0", "/layers.1/MatMul": "gpu:0", "/layers.1/Add": "gpu:0", "/head/Erf": "cpu"},
			causes: map[string]scheduler.Cause{"/layers.0/MatMul": scheduler.CauseCheaper, "/layers.0/Relu": scheduler.CauseInputs, "/head/Erf": scheduler.CauseUnsupported}},
		{name: "expensive transfers, small graph: all on the CPU", m: 64, k: 8, latency: 10000,
			want:   map[string]string{"/layers.0/MatMul": "cpu", "/layers.0/Relu": "cpu", "/layers.1/MatMul": "cpu", "/layers.1/Add": "cpu", "/head/Erf": "cpu", "/head/Mul": "cpu"},
			causes: map[string]scheduler.Cause{"/layers.0/MatMul": scheduler.CauseCheaper, "/layers.1/MatMul": scheduler.CauseInputs}},
		{name: "batch below the threshold stays on the CPU", m: 4, k: 512, latency: 1,
			want:   map[string]string{"/layers.0/MatMul": "cpu", "/layers.1/MatMul": "cpu"},
			causes: map[string]scheduler.Cause{"/layers.0/MatMul": scheduler.CauseBatch}},
		{name: "a lower threshold lets it go", m: 4, k: 512, latency: 1, threshold: 4,
			want: map[string]string{"/layers.0/MatMul": "gpu:0", "/layers.1/MatMul": "gpu:0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := newResidency()
			g := mlp(t, tc.m, tc.k, tc.k)
			_, r, err := scheduler.ScheduleReport(g, scheduler.Options{Devices: devices(res, false),
				Profile: profile(tc.latency, 10, false), BatchThreshold: tc.threshold})
			require.NoError(t, err)
			got := placed(r)
			for node, dev := range tc.want {
				require.Equal(t, dev, got[node].Device, "%s: %s", node, got[node].Text)
			}
			for node, c := range tc.causes {
				require.Equal(t, c, got[node].Cause, "%s: %s", node, got[node].Text)
			}
		})
	}
}

func TestBatchThresholdText(t *testing.T) {
	res := newResidency()
	_, r, err := scheduler.ScheduleReport(mlp(t, 4, 512, 512), scheduler.Options{Devices: devices(res, false), Profile: profile(1, 10, false)})
	require.NoError(t, err)
	p := placed(r)["/layers.0/MatMul"]
	require.Contains(t, p.Text, "batch 4 below the GPU threshold 32")
}

func TestPlaceRules(t *testing.T) {
	tests := []struct {
		name  string
		rules []string
		want  map[string]string
		warn  []string // nodes whose placement is a fallback warning
	}{
		{name: "op rule", rules: []string{"Relu=gpu"},
			want: map[string]string{"/layers.0/Relu": "gpu:0"}},
		{name: "name glob, later rules win", rules: []string{"*=gpu", "name:/layers.1/*=cpu"},
			want: map[string]string{"/layers.0/MatMul": "gpu:0", "/layers.0/Relu": "gpu:0", "/layers.1/MatMul": "cpu", "/layers.1/Add": "cpu", "/head/Mul": "gpu:0"},
			warn: []string{"/head/Erf"}},
		{name: "unsupported rule falls back with a warning", rules: []string{"Erf=gpu:0"},
			want: map[string]string{"/head/Erf": "cpu"}, warn: []string{"/head/Erf"}},
		{name: "kind and backend names", rules: []string{"name:*/MatMul=gpu:0", "name:/layers.0/*=cpu"},
			want: map[string]string{"/layers.0/MatMul": "cpu", "/layers.1/MatMul": "gpu:0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := newResidency()
			rules, err := scheduler.ParseRules(tc.rules)
			require.NoError(t, err)
			// Small shapes and slow transfers: without rules all would be on the CPU.
			_, r, err := scheduler.ScheduleReport(mlp(t, 2, 8, 8), scheduler.Options{Devices: devices(res, false),
				Profile: profile(1000, 1, false), Rules: rules})
			require.NoError(t, err)
			got := placed(r)
			for node, dev := range tc.want {
				require.Equal(t, dev, got[node].Device, "%s: %s", node, got[node].Text)
			}
			var warned []string
			for _, p := range r.Placements {
				if p.Warning {
					warned = append(warned, p.Node.Name)
					require.Equal(t, scheduler.CausePinFallback, p.Cause)
					require.Contains(t, p.Text, "cannot run it")
				}
			}
			require.Equal(t, tc.warn, warned)
			for node := range tc.want {
				if !slices.Contains(tc.warn, node) {
					require.Equal(t, scheduler.CausePinned, got[node].Cause, node)
				}
			}
			require.Len(t, r.Warnings, len(tc.warn))
		})
	}
}

func TestRuleErrors(t *testing.T) {
	for _, bad := range []string{"MatMul", "=cpu", "MatMul=", "name:=cpu"} {
		_, err := scheduler.ParseRule(bad)
		require.Error(t, err, bad)
	}
	rules, err := scheduler.ParseRules([]string{"MatMul=npu"})
	require.NoError(t, err)
	_, err = scheduler.Schedule(mlp(t, 2, 8, 8), scheduler.Options{Devices: devices(newResidency(), false), Rules: rules})
	require.ErrorContains(t, err, `names unknown device "npu"`)
}

// checkTransfers asserts that every cross-device read goes through a
// Transfer node and that every Transfer crosses an incompatible boundary.
func checkTransfers(t *testing.T, p *plan.Plan, hostVisible map[string]bool) int {
	t.Helper()
	devOf := map[*ir.Value]string{}
	for _, part := range p.Partitions {
		for _, n := range part.Nodes {
			for _, o := range n.Outputs {
				devOf[o] = part.Device
				if n.Op == ir.OpTransfer {
					devOf[o] = n.Attrs["to"].Str
				}
			}
		}
	}
	compatible := func(a, b string) bool { return a == b || (hostVisible[a] || a == "") && hostVisible[b] }
	count := 0
	for _, part := range p.Partitions {
		for _, n := range part.Nodes {
			if n.Op == ir.OpTransfer {
				count++
				from, to := devOf[n.Inputs[0]], n.Attrs["to"].Str
				require.False(t, compatible(from, to), "needless transfer %s", n.Name)
				require.True(t, part.Device == to || part.Device == from)
				continue
			}
			for _, v := range n.Inputs {
				if v != nil && !v.IsConst() {
					require.True(t, compatible(devOf[v], part.Device), "node %v on %s reads %v from %q", n, part.Device, v, devOf[v])
				}
			}
		}
	}
	for _, o := range p.Graph.Outputs {
		require.True(t, compatible(devOf[o], "cpu"), "output %v left on %s", o, devOf[o])
	}
	return count
}

func TestTransfersAndRun(t *testing.T) {
	for _, hostVisible := range []bool{false, true} {
		res := newResidency()
		g := mlp(t, 64, 256, 256)
		x := ir.NewTensor(ir.Float32, []int64{64, 256})
		for i := range x.Len() {
			x.SetFloat64(i, float64(i%17)/8-1)
		}
		want, err := ref.RunGraph(context.Background(), g, nil, []*ir.Tensor{x})
		require.NoError(t, err)

		devs := devices(res, hostVisible)
		p, r, err := scheduler.ScheduleReport(g, scheduler.Options{Devices: devs, Profile: profile(1, 10, hostVisible)})
		require.NoError(t, err)
		require.Greater(t, r.GPUFraction(), 0.5)
		n := checkTransfers(t, p, map[string]bool{"cpu": true, "gpu:0": hostVisible})
		require.Equal(t, n, r.Transfers)
		if hostVisible {
			require.Zero(t, n, "no copies between host-visible devices")
		} else {
			// x up; h (the Add result) down for Erf, a copy that also
			// serves the output h; Erf's result up (Mul is cheaper on the
			// GPU even with the copy); y down: 4 copies of 64 KiB.
			require.Equal(t, 4, n)
			require.Equal(t, int64(4*64*256*4), r.TransferBytes)
		}
		require.Len(t, p.Graph.Outputs, 2)
		require.Equal(t, "y", p.Graph.Outputs[0].Name)
		require.Equal(t, "h", p.Graph.Outputs[1].Name)
		require.Equal(t, len(p.Graph.Nodes), len(r.Placements))

		s, err := runtime.NewSession(p, devs)
		require.NoError(t, err)
		got, err := s.Run(context.Background(), map[string]*ir.Tensor{"x": x})
		require.NoError(t, err)
		require.InDeltaSlice(t, want[0].Float32s(), got["y"].Float32s(), 1e-5)
		require.InDeltaSlice(t, want[1].Float32s(), got["h"].Float32s(), 1e-5)
	}
}

func TestReport(t *testing.T) {
	res := newResidency()
	g := mlp(t, 64, 256, 256)
	p, r, err := scheduler.ScheduleReport(g, scheduler.Options{Devices: devices(res, false), Profile: profile(1, 10, false)})
	require.NoError(t, err)
	var sum, flops float64
	for _, pd := range r.Placements {
		sum += pd.Us
	}
	for _, d := range r.Devices {
		flops += float64(d.FLOPs)
	}
	require.InDelta(t, sum, r.EstimatedUs, 1e-6)
	require.Equal(t, float64(scheduler.GraphCost(g).FLOPs), flops) // transfers add no FLOPs
	require.Len(t, r.Timeline, len(p.Partitions))
	require.InDelta(t, r.EstimatedUs, r.Timeline[len(r.Timeline)-1].EndUs, 1e-6)
	require.Contains(t, r.Text(), "profile test")
}

// tracked wraps a real device: after each partition it records where the
// partition's outputs live, for the fakes' residency checks.
type tracked struct {
	backends.Device
	res *residency
}

func (d tracked) Compile(p *plan.Partition) (backends.Executable, error) {
	exe, err := d.Device.Compile(p)
	return trackedExe{exe, d, p.Nodes}, err
}

type trackedExe struct {
	backends.Executable
	d     tracked
	nodes []*ir.Node
}

func (e trackedExe) Run(ctx context.Context, env *backends.Env) error {
	if err := e.Executable.Run(ctx, env); err != nil {
		return err
	}
	e.d.res.mu.Lock()
	defer e.d.res.mu.Unlock()
	for _, n := range e.nodes {
		dst := e.d.Name()
		if n.Op == ir.OpTransfer {
			dst = n.Attrs["to"].Str
		}
		for _, o := range n.Outputs {
			e.d.res.where[env.Get(o)] = dst
		}
	}
	return nil
}

// A GPU that declines Transfer leaves the copies to the real CPU backend,
// which runs them with its reference kernel.
func TestCPUBackendRunsTransfers(t *testing.T) {
	res := newResidency()
	cpuBackend, ok := backends.Get("cpu")
	require.True(t, ok)
	cpus, err := cpuBackend.Devices()
	require.NoError(t, err)
	res.host["cpu"] = true
	gpu := newFake(res, "gpu:0", backends.GPU, false, gpuOps...)
	delete(gpu.ops, ir.OpTransfer)
	devs := []backends.Device{tracked{cpus[0], res}, gpu}

	g := mlp(t, 64, 256, 256)
	x := ir.NewTensor(ir.Float32, []int64{64, 256})
	for i := range x.Len() {
		x.SetFloat64(i, float64(i%13)/6-1)
	}
	want, err := ref.RunGraph(context.Background(), g, nil, []*ir.Tensor{x})
	require.NoError(t, err)
	p, r, err := scheduler.ScheduleReport(g, scheduler.Options{Devices: devs, Profile: profile(1, 10, false)})
	require.NoError(t, err)
	require.Equal(t, 4, r.Transfers)
	for _, pd := range r.Placements {
		if pd.Cause == scheduler.CauseTransfer {
			require.Equal(t, "cpu", pd.Device, pd.Node.Name)
		}
	}
	s, err := runtime.NewSession(p, devs)
	require.NoError(t, err)
	got, err := s.Run(context.Background(), map[string]*ir.Tensor{"x": x})
	require.NoError(t, err)
	require.InDeltaSlice(t, want[0].Float32s(), got["y"].Float32s(), 1e-5)
	require.InDeltaSlice(t, want[1].Float32s(), got["h"].Float32s(), 1e-5)
}

// The same graph, devices and profile give the same plan.
func TestDeterministic(t *testing.T) {
	var texts []string
	for range 3 {
		p, r, err := scheduler.ScheduleReport(mlp(t, 64, 256, 256), scheduler.Options{Devices: devices(newResidency(), false), Profile: profile(1, 10, false)})
		require.NoError(t, err)
		texts = append(texts, p.Text()+r.Text())
	}
	require.Equal(t, texts[0], texts[1])
	require.Equal(t, texts[0], texts[2])
}
