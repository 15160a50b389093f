package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	goruntime "runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/scheduler"
)

// calibration is what `weft calibrate` measured.
type calibration struct {
	MatMulGFLOPS float64 // f32 matmul through the CPU backend
	ReadGBs      float64 // memory read bandwidth
	LaunchUs     float64 // per-op cost of a chain of tiny ops
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
			p := c.profile(name)
			if err := p.Validate(); err != nil {
				return err
			}
			data, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				return err
			}
			data = append(data, '\n')
			fmt.Fprintf(cmd.ErrOrStderr(), "cpu: matmul %.2f GFLOP/s (f32, %d×%d), read %.2f GB/s, launch %.2f µs/op\n",
				c.MatMulGFLOPS, n, n, c.ReadGBs, c.LaunchUs)
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
	cmd.Flags().DurationVar(&budget, "time", 500*time.Millisecond, "time spent on each benchmark")
	return cmd
}

func writeBytes(path string, data []byte) error {
	return writeFile(path, func(f *os.File) error { _, err := f.Write(data); return err })
}

// calibrate runs the three benchmarks, each for about budget; every figure
// is the best of its repetitions (the least disturbed one).
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

	c.ReadGBs = readBandwidth(64<<20, budget)

	const chain = 256
	best, err = timeGraph(ctx, tinyChain(chain), budget)
	if err != nil {
		return c, fmt.Errorf("calibrate: launch: %w", err)
	}
	c.LaunchUs = best.Seconds() * 1e6 / chain
	return c, nil
}

// timeGraph compiles g (-O0, so that nothing is folded away) for the CPU
// and returns the best time of repeated runs on random inputs.
func timeGraph(ctx context.Context, g *ir.Graph, budget time.Duration) (time.Duration, error) {
	m, err := weft.New(g, weft.Options{OptLevel: 0})
	if err != nil {
		return 0, err
	}
	defer m.Close()
	in := map[string]*ir.Tensor{}
	rng := rand.New(rand.NewSource(1))
	for _, v := range m.Inputs() {
		t := ir.NewTensor(v.DType, v.Shape.Ints())
		for i := range t.Len() {
			t.SetFloat64(i, rng.Float64())
		}
		in[v.Name] = t
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

// readSink keeps the read loop from being optimized away.
var readSink uint64

// readBandwidth streams over a buffer of size bytes (summing its words with
// four independent accumulators) and returns the best rate in GB/s.
func readBandwidth(size int, budget time.Duration) float64 {
	buf := make([]uint64, size/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	best := time.Duration(1<<63 - 1)
	start := time.Now()
	for runs := 0; runs < 3 || time.Since(start) < budget; runs++ {
		t0 := time.Now()
		var s0, s1, s2, s3 uint64
		for i := 0; i+4 <= len(buf); i += 4 {
			s0 += buf[i]
			s1 += buf[i+1]
			s2 += buf[i+2]
			s3 += buf[i+3]
		}
		readSink += s0 + s1 + s2 + s3
		best = min(best, time.Since(t0))
	}
	return float64(size) / best.Seconds() / 1e9
}

// profile writes the measurements as a one-device profile.
func (c calibration) profile(name string) *scheduler.Profile {
	return &scheduler.Profile{
		Name:        name,
		Description: fmt.Sprintf("this machine's CPU (%s/%s, %d logical CPUs), measured by weft calibrate", goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU()),
		Devices: []scheduler.DeviceProfile{{
			Name: "cpu", Kind: "cpu", Model: fmt.Sprintf("%s, %d logical CPUs", goruntime.GOARCH, goruntime.NumCPU()),
			PeakGFLOPS:       map[string]float64{"f32": round3(c.MatMulGFLOPS)},
			MemBandwidthGBs:  round3(c.ReadGBs),
			LaunchOverheadUs: round3(c.LaunchUs),
			HostVisible:      true,
			Source: fmt.Sprintf("weft calibrate, %s: f32 MatMul through the CPU backend, a 64 MiB streaming read, a chain of 256 one-element Relu ops (best of repeated runs)",
				time.Now().UTC().Format("2006-01-02")),
			Estimate: "peak_gflops.f32 is what weft's CPU kernels reach on a matmul, not the hardware peak; f16 and int8 are not measured (the cost model uses the f32 rate)",
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
