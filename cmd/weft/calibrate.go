package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/internal/membw"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/scheduler"
)

// calibration is what `weft calibrate` measured.
type calibration struct {
	MatMulGFLOPS float64 // f32 matmul through the CPU backend
	ReadGBs      float64 // memory read bandwidth
	LaunchUs     float64 // per-op cost of a chain of tiny ops
	// Family is the rate (GFLOP/s, FLOPs as scheduler.NodeCost counts them)
	// the CPU backend reaches on a model-sized op of each cost-model family
	// (scheduler.DeviceProfile.OpGFLOPS), compiled at -O2 as models are.
	Family map[string]float64
}

// familyBench is one op-family benchmark: a model-sized op of the family.
type familyBench struct {
	family, what string
	build        func() *ir.Graph
}

// familyBenches are what calibrate times per family: model-shaped ops
// (BERT-base projections, ResNet stage convolutions with their ReLU, fused
// at -O2, the ResNet stem's max-pool, a BERT LayerNorm and attention, a
// Gelu over an FFN activation).
var familyBenches = []familyBench{
	{"matmul", "a BERT-base layer's projections, [128,768]·[768,768], ·[768,3072], ·[3072,768] with biases", linearGraph},
	{"conv", "Conv+Relu 3×3 64@56×56, 128@28×28, 256@14×14, 512@7×7 in a row", convGraph},
	{"pool", "MaxPool 3×3/2 on [1,64,112,112]", func() *ir.Graph { return poolGraph(64, 112) }},
	{"norm", "LayerNormalization [128,768]", func() *ir.Graph { return normGraph(128, 768) }},
	{"attention", "Attention [1,12,128,64]", func() *ir.Graph { return attentionGraph(12, 128, 64) }},
	{"act", "Gelu [128,3072]", func() *ir.Graph { return unaryGraph("Gelu", 128, 3072) }},
}

func newCalibrateCmd() *cobra.Command {
	var (
		out, name string
		n         int
		budget    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "calibrate [-o profile.json]",
		Short: "measure this machine's CPU and write a device profile for the scheduler",
		Long: "Run three microbenchmarks on this machine's CPU — an f32 matrix product through the\n" +
			"CPU backend (GFLOP/s), a streaming read of a large buffer (GB/s), and a chain of tiny\n" +
			"ops (the per-op launch overhead in µs) — and write them as a device profile (JSON,\n" +
			"see docs/profiles.md) that `weft plan --profile FILE` and `weft compile` use.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := calibrate(cmd.Context(), n, budget)
			if err != nil {
				return err
			}
			data, err := jsonProfile(c.profile(name))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "cpu: matmul %.2f GFLOP/s (f32, %d×%d), read %.2f GB/s, launch %.2f µs/op; per family: matmul %.2f, conv %.2f, attention %.2f, pool %.2f, norm %.2f, act %.3f GFLOP/s\n",
				c.MatMulGFLOPS, n, n, c.ReadGBs, c.LaunchUs, c.Family["matmul"], c.Family["conv"], c.Family["attention"], c.Family["pool"], c.Family["norm"], c.Family["act"])
			if out == "" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			return writeBytes(out, data)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the profile file to write (default: standard output)")
	cmd.Flags().StringVar(&name, "name", "host", "the profile's name")
	cmd.Flags().IntVar(&n, "size", 256, "matrix size of the matmul benchmark")
	cmd.Flags().DurationVar(&budget, "time", 500*time.Millisecond, "time spent on each timed benchmark (the read probe makes its own fixed passes, about a second)")
	return cmd
}

// jsonProfile validates p and renders it as indented JSON.
func jsonProfile(p *scheduler.Profile) ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func writeBytes(path string, data []byte) error {
	return writeFile(path, func(f *os.File) error { _, err := f.Write(data); return err })
}

// calibrate runs the benchmarks, each timed one for about budget and its
// figure the best of its repetitions (the least disturbed one); the read
// probe (membw.Read) makes its own fixed passes and gives its median.
func calibrate(ctx context.Context, n int, budget time.Duration) (calibration, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if n < 8 {
		return calibration{}, fmt.Errorf("calibrate: --size %d is too small (want ≥ 8)", n)
	}
	var c calibration
	best, err := timeGraph(ctx, matmulGraph(n), budget)
	if err != nil {
		return c, fmt.Errorf("calibrate: matmul: %w", err)
	}
	c.MatMulGFLOPS = 2 * float64(n) * float64(n) * float64(n) / best.Seconds() / 1e9

	// The read probe weft bench compares decode with (internal/membw: the
	// fastest of plain and vector readers, with and without software
	// prefetch, on its median pass), at the thread count the kernels run
	// with. A plain Go loop on one thread read 3.4–3.7 GB/s on an Intel
	// Xeon guest whose cores stream 9 GB/s each; the cost model then
	// priced a 3-channel 7×7 convolution at 6–8× its time.
	c.ReadGBs = membw.Read(goruntime.GOMAXPROCS(0))

	const chain = 256
	best, err = timeGraph(ctx, tinyChain(chain), budget)
	if err != nil {
		return c, fmt.Errorf("calibrate: launch: %w", err)
	}
	c.LaunchUs = best.Seconds() * 1e6 / chain

	c.Family = map[string]float64{}
	for _, fb := range familyBenches {
		g := fb.build()
		if err := passes.InferShapes(g); err != nil {
			return c, fmt.Errorf("calibrate: %s: %w", fb.family, err)
		}
		m, err := weft.New(g, weft.Options{OptLevel: 2, Target: []string{"cpu"}})
		if err != nil {
			return c, fmt.Errorf("calibrate: %s: %w", fb.family, err)
		}
		flops := scheduler.GraphCost(m.Graph).FLOPs
		best, err := timeModel(ctx, m, budget)
		m.Close()
		if err != nil {
			return c, fmt.Errorf("calibrate: %s: %w", fb.family, err)
		}
		// The launch overhead is counted apart by the cost model.
		sec := max(best.Seconds()-c.LaunchUs*1e-6*float64(len(m.Graph.Nodes)), best.Seconds()/2)
		c.Family[fb.family] = float64(flops) / sec / 1e9
	}
	return c, nil
}

// timeGraph compiles g (-O0, so that nothing is folded away) for the CPU
// and returns the best time of repeated runs on random inputs.
func timeGraph(ctx context.Context, g *ir.Graph, budget time.Duration) (time.Duration, error) {
	m, err := weft.New(g, weft.Options{OptLevel: 0, Target: []string{"cpu"}})
	if err != nil {
		return 0, err
	}
	defer m.Close()
	return timeModel(ctx, m, budget)
}

// timeModel returns the best time of repeated runs of m on random inputs,
// after one untimed run (which allocates the arenas).
func timeModel(ctx context.Context, m *weft.Model, budget time.Duration) (time.Duration, error) {
	in := map[string]*ir.Tensor{}
	rng := rand.New(rand.NewSource(1))
	for _, v := range m.Inputs() {
		t := ir.NewTensor(v.DType, v.Shape.Ints())
		for i := range t.Len() {
			t.SetFloat64(i, rng.Float64())
		}
		in[v.Name] = t
	}
	if _, err := m.Run(ctx, in); err != nil {
		return 0, err
	}
	best := time.Duration(1<<63 - 1)
	start := time.Now()
	for runs := 0; runs < 3 || time.Since(start) < budget; runs++ {
		t0 := time.Now()
		if _, err := m.Run(ctx, in); err != nil {
			return 0, err
		}
		best = min(best, time.Since(t0))
	}
	return best, nil
}

// matmulGraph is Y = A·B with A an input and B a constant, both n×n f32.
func matmulGraph(n int) *ir.Graph {
	b := ir.NewBuilder("calibrate-matmul")
	a := b.Input("a", ir.Float32, ir.S(int64(n), int64(n)))
	w := ir.NewTensor(ir.Float32, []int64{int64(n), int64(n)})
	rng := rand.New(rand.NewSource(2))
	for i := range w.Len() {
		w.SetFloat64(i, rng.Float64())
	}
	y := b.Op("MatMul", a, b.Const("b", w))
	y.DType, y.Shape = ir.Float32, ir.S(int64(n), int64(n))
	b.Output("y", y)
	return b.G
}

// randConst adds a constant of the given shape with values in [-0.5, 0.5).
func randConst(b *ir.Builder, name string, rng *rand.Rand, shape ...int64) *ir.Value {
	w := ir.NewTensor(ir.Float32, shape)
	for i := range w.Len() {
		w.SetFloat64(i, rng.Float64()-0.5)
	}
	return b.Const(name, w)
}

// linearGraph is a BERT-base layer's projections in a row, each
// Y = X·W + bias with its own weights (FusedMatMul at -O2): [128,768]·
// [768,768], ·[768,3072], ·[3072,768]. Distinct weights (21 MB) make the
// weights come from memory as in a model, not from a cache kept hot by
// timing one op over and over.
func linearGraph() *ir.Graph {
	b := ir.NewBuilder("calibrate-linear")
	rng := rand.New(rand.NewSource(3))
	y := b.Input("x", ir.Float32, ir.S(128, 768))
	k := int64(768)
	for i, n := range []int64{768, 3072, 768} {
		y = b.Op("Add", b.Op("MatMul", y, randConst(b, fmt.Sprintf("w%d", i), rng, k, n)), randConst(b, fmt.Sprintf("b%d", i), rng, n))
		k = n
	}
	b.Output("y", y)
	return b.G
}

// convGraph is a ResNet-18 in miniature: one 3×3 convolution (+bias, ReLU)
// per stage width and resolution, 64 channels at 56×56, then 128, 256 and
// 512 at stride 2 (28×28, 14×14, 7×7), each with its own weights.
func convGraph() *ir.Graph {
	b := ir.NewBuilder("calibrate-conv")
	rng := rand.New(rand.NewSource(4))
	y := b.Input("x", ir.Float32, ir.S(1, 64, 56, 56))
	c := int64(64)
	for i, out := range []int64{64, 128, 256, 512} {
		stride := int64(2)
		if i == 0 {
			stride = 1
		}
		y = b.OpA("Conv", []ir.AttrOption{ir.Ints("kernel_shape", 3, 3), ir.Ints("pads", 1, 1, 1, 1), ir.Ints("strides", stride, stride)},
			y, randConst(b, fmt.Sprintf("w%d", i), rng, out, c, 3, 3), randConst(b, fmt.Sprintf("b%d", i), rng, out))
		y = b.Op("Relu", y)
		c = out
	}
	b.Output("y", y)
	return b.G
}

// poolGraph is a 3×3, stride 2, pad 1 MaxPool over c channels of s×s.
func poolGraph(c, s int64) *ir.Graph {
	b := ir.NewBuilder("calibrate-pool")
	x := b.Input("x", ir.Float32, ir.S(1, c, s, s))
	b.Output("y", b.OpA("MaxPool", []ir.AttrOption{ir.Ints("kernel_shape", 3, 3), ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)}, x))
	return b.G
}

// normGraph is a LayerNormalization over the last axis of [m,n].
func normGraph(m, n int64) *ir.Graph {
	b := ir.NewBuilder("calibrate-norm")
	rng := rand.New(rand.NewSource(5))
	x := b.Input("x", ir.Float32, ir.S(m, n))
	b.Output("y", b.OpA("LayerNormalization", []ir.AttrOption{ir.Int("axis", -1)}, x, randConst(b, "scale", rng, n), randConst(b, "bias", rng, n)))
	return b.G
}

// attentionGraph is BERT-style self-attention on inputs Q, K, V [1,h,s,d].
func attentionGraph(h, s, d int64) *ir.Graph {
	b := ir.NewBuilder("calibrate-attention")
	q := b.Input("q", ir.Float32, ir.S(1, h, s, d))
	k := b.Input("k", ir.Float32, ir.S(1, h, s, d))
	v := b.Input("v", ir.Float32, ir.S(1, h, s, d))
	b.Output("y", b.Op("Attention", q, k, v))
	return b.G
}

// unaryGraph is one elementwise op over [m,n].
func unaryGraph(op string, m, n int64) *ir.Graph {
	b := ir.NewBuilder("calibrate-" + op)
	x := b.Input("x", ir.Float32, ir.S(m, n))
	b.Output("y", b.Op(op, x))
	return b.G
}

// tinyChain is k Relu ops on a one-element tensor: its time is launch overhead.
func tinyChain(k int) *ir.Graph {
	b := ir.NewBuilder("calibrate-launch")
	v := b.Input("x", ir.Float32, ir.S(1))
	for range k {
		v = b.Op("Relu", v)
		v.DType, v.Shape = ir.Float32, ir.S(1)
	}
	b.Output("y", v)
	return b.G
}

// profile writes the measurements as a one-device profile.
func (c calibration) profile(name string) *scheduler.Profile {
	var fam map[string]float64
	var what []string
	for _, fb := range familyBenches {
		if r := c.Family[fb.family]; r > 0 {
			if fam == nil {
				fam = map[string]float64{}
			}
			fam[fb.family] = round3(r)
			what = append(what, fb.family+": "+fb.what)
		}
	}
	return &scheduler.Profile{
		Name:        name,
		Description: fmt.Sprintf("this machine's CPU (%s/%s, %d logical CPUs), measured by weft calibrate", goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU()),
		Devices: []scheduler.DeviceProfile{{
			Name: "cpu", Kind: "cpu", Model: fmt.Sprintf("%s, %d logical CPUs", goruntime.GOARCH, goruntime.NumCPU()),
			PeakGFLOPS:       map[string]float64{"f32": round3(c.MatMulGFLOPS)},
			OpGFLOPS:         fam,
			MemBandwidthGBs:  round3(c.ReadGBs),
			LaunchOverheadUs: round3(c.LaunchUs),
			HostVisible:      true,
			Source: fmt.Sprintf("weft calibrate, %s: f32 MatMul through the CPU backend, the read probe (internal/membw, the kernels' threads), a chain of 256 one-element Relu ops; op_gflops per family at -O2 (%s) (best of repeated runs)",
				time.Now().UTC().Format("2006-01-02"), strings.Join(what, "; ")),
			Estimate: "peak_gflops.f32 is what weft's CPU kernels reach on a cache-sized matmul, not the hardware peak; op_gflops are the rates of model-sized ops of each family through the same kernels; f16 and int8 are not measured (the cost model uses the f32 rate)",
		}},
	}
}

func round3(x float64) float64 {
	switch {
	case x >= 100:
		return float64(int64(x*10+0.5)) / 10
	case x >= 1:
		return float64(int64(x*1000+0.5)) / 1000
	}
	return float64(int64(x*1e5+0.5)) / 1e5
}
