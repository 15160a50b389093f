package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
)

// benchResult is what `weft bench --json` prints: one object. The first
// seven fields are the contract shared with the peer scripts under bench/
// (bench/ort/bench.mjs prints the same keys); the rest are extras.
type benchResult struct {
	Model           string  `json:"model"`
	Threads         int     `json:"threads"`
	Runs            int     `json:"runs"`
	LatencyMsMedian float64 `json:"latency_ms_median"`
	LatencyMsMin    float64 `json:"latency_ms_min"`
	LatencyMsMax    float64 `json:"latency_ms_max"`
	// PeakRSSBytes is the process's peak resident set size (compile and
	// runs included); null where the OS does not report it.
	PeakRSSBytes *int64 `json:"peak_rss_bytes"`

	Runtime      string  `json:"runtime"`
	WeftVersion  string  `json:"weft_version"`
	GoVersion    string  `json:"go_version"`
	Platform     string  `json:"platform"`
	OptLevel     int     `json:"opt_level"`
	PlanOptions  string  `json:"plan_options,omitempty"`
	CompileMs    float64 `json:"compile_ms"`
	FirstRunMs   float64 `json:"first_run_ms"`
	Warmup       int     `json:"warmup"`
	LatencyMsP90 float64 `json:"latency_ms_p90"`
	// ThreadsMechanism says how --threads takes effect.
	ThreadsMechanism string            `json:"threads_mechanism"`
	Inputs           map[string]string `json:"inputs"`
	Outputs          map[string]string `json:"outputs"`
	Nodes            int               `json:"nodes"`
	// AllocsPerRun and AllocBytesPerRun are Go heap allocations per timed
	// run (runtime.MemStats over all of them).
	AllocsPerRun     float64 `json:"allocs_per_run"`
	AllocBytesPerRun float64 `json:"alloc_bytes_per_run"`
}

// threadsMechanism is the honest account of what --threads does today.
const threadsMechanism = "weft.Options.Threads (the CPU kernels' worker pool) and GOMAXPROCS"

func newBenchCmd() *cobra.Command {
	var (
		threads, runs, warmup int
		dims                  []string
		asJSON                bool
	)
	cmd := &cobra.Command{
		Use:   "bench MODEL",
		Short: "time a model (.onnx or .wplan: latency of N runs; .gguf or llama2.c .bin: prefill and decode tok/s), peak RSS",
		Long: "Compile MODEL (.onnx) or open a plan (.wplan), make the same deterministic\n" +
			"inputs as `weft run`, do one untimed first run (which also finds the output\n" +
			"shapes), --warmup more, then --runs timed runs of Model.RunInto into\n" +
			"caller-owned output tensors. Prints median, p90, min and max latency, the\n" +
			"compile time and the process's peak RSS (compile included).\n" +
			"--threads N sets weft.Options.Threads (the CPU kernels' worker pool) and\n" +
			"GOMAXPROCS (the goroutines that run everything else) to N.\n\n" +
			"A language model (.gguf, llama2.c .bin) runs a greedy generation of a\n" +
			"--prefill-token prompt of fixed ids and --decode steps: prefill tok/s, time to\n" +
			"first token, decode tok/s, peak RSS and its bound (weights + KV cache +\n" +
			"64 MiB). Decode's share of the read bandwidth is measured against a streaming\n" +
			"read probe with the same threads, whose passes run between the decode steps\n" +
			"of a second generation. The same decode is then measured from an empty\n" +
			"context (a 1-token prompt, as llama-bench's tg test), where each step reads\n" +
			"few KV cache rows. --draft adds a speculative generation.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("bench wants exactly one MODEL file (.onnx, %s, .gguf or a llama2.c .bin)", weft.PlanExt)
			}
			return nil
		},
	}
	opts, targeted := addOptFlag(cmd), addTargetFlag(cmd)
	llmFlags := addLLMBenchFlags(cmd)
	f := cmd.Flags()
	f.IntVar(&threads, "threads", 0, "threads to run with (weft.Options.Threads and GOMAXPROCS; 0 = GOMAXPROCS as it is, by default the CPU count)")
	f.IntVar(&runs, "runs", 10, "timed runs")
	f.IntVar(&warmup, "warmup", 2, "untimed warm-up runs after the first run")
	f.StringArrayVar(&dims, "dim", nil, "size of symbolic dimension SYM for generated inputs (SYM=N; repeatable)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object instead of text")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if runs < 1 {
			return fmt.Errorf("--runs %d: want at least 1", runs)
		}
		if warmup < 0 {
			return fmt.Errorf("--warmup %d: want 0 or more", warmup)
		}
		if threads < 0 {
			return fmt.Errorf("--threads %d: want 0 (GOMAXPROCS as it is) or more", threads)
		}
		dimVals, err := parseDimFlags(dims)
		if err != nil {
			return err
		}
		if threads > 0 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
		}
		o := targeted(opts())
		o.Threads = threads // the CPU kernels' pool (GOMAXPROCS is set too)
		if isLLMPath(args[0]) {
			res, err := benchLLM(args[0], o, llmFlags)
			if err != nil {
				return err
			}
			return printLLMBench(cmd.OutOrStdout(), res, asJSON)
		}
		res, err := benchModel(args[0], o, dimVals, runs, warmup)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if asJSON {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		}
		printBench(out, res)
		return nil
	}
	return cmd
}

// benchModel opens path, binds generated inputs and times the runs.
func benchModel(path string, o weft.Options, dims map[string]int64, runs, warmup int) (*benchResult, error) {
	t0 := time.Now()
	m, err := weft.Open(path, o)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	compile := time.Since(t0)

	feed := map[string]*ir.Tensor{}
	if err := bindInputs(m.Inputs(), nil, dims, feed); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	inputs := make([]*ir.Tensor, len(m.Inputs()))
	shapes := map[string]string{}
	for i, v := range m.Inputs() {
		if v.IsConst() {
			inputs[i] = v.Const
			continue
		}
		inputs[i] = feed[v.Name]
		shapes[v.Name] = fmt.Sprintf("%v[%v]", inputs[i].DType, ir.ShapeOf(inputs[i].Shape))
	}

	ctx := context.Background()
	// The first run allocates its outputs; their shapes size the tensors
	// the timed runs write into.
	t1 := time.Now()
	first, err := m.Run(ctx, feed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	firstRun := time.Since(t1)
	outputs := make([]*ir.Tensor, len(m.Outputs()))
	outShapes := map[string]string{}
	for i, name := range m.OutputNames() {
		t, ok := first[name]
		if !ok {
			return nil, fmt.Errorf("%s: the run returned no output %q", path, name)
		}
		outputs[i] = ir.NewTensor(t.DType, slices.Clone(t.Shape))
		outShapes[name] = fmt.Sprintf("%v[%v]", t.DType, ir.ShapeOf(t.Shape))
	}
	for range warmup {
		if err := m.RunInto(ctx, inputs, outputs); err != nil {
			return nil, fmt.Errorf("%s: warm-up: %w", path, err)
		}
	}
	lat := make([]float64, runs)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for i := range lat {
		s := time.Now()
		if err := m.RunInto(ctx, inputs, outputs); err != nil {
			return nil, fmt.Errorf("%s: run %d: %w", path, i+1, err)
		}
		lat[i] = ms(time.Since(s))
	}
	runtime.ReadMemStats(&ms1)

	res := &benchResult{
		Model:            path,
		Threads:          runtime.GOMAXPROCS(0),
		Runs:             runs,
		Runtime:          "weft",
		WeftVersion:      weftVersion(),
		GoVersion:        runtime.Version(),
		Platform:         runtime.GOOS + "/" + runtime.GOARCH,
		OptLevel:         o.OptLevel,
		CompileMs:        ms(compile),
		FirstRunMs:       ms(firstRun),
		Warmup:           warmup,
		ThreadsMechanism: threadsMechanism,
		Inputs:           shapes,
		Outputs:          outShapes,
		Nodes:            len(m.Graph.Nodes),
		AllocsPerRun:     float64(ms1.Mallocs-ms0.Mallocs) / float64(runs),
		AllocBytesPerRun: float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(runs),
	}
	if m.PlanMeta != nil {
		res.PlanOptions = m.PlanMeta["options"]
	}
	res.LatencyMsMedian, res.LatencyMsP90, res.LatencyMsMin, res.LatencyMsMax = latencyStats(lat)
	if rss, ok := peakRSS(); ok {
		res.PeakRSSBytes = &rss
	}
	return res, nil
}

// latencyStats returns the median, 90th percentile (nearest rank), min and
// max of xs (not empty); xs is sorted in place.
func latencyStats(xs []float64) (median, p90, lo, hi float64) {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		median = xs[n/2]
	} else {
		median = (xs[n/2-1] + xs[n/2]) / 2
	}
	p90 = xs[max(0, int(math.Ceil(0.9*float64(n)))-1)]
	return median, p90, xs[0], xs[n-1]
}

// ms converts d to milliseconds at nanosecond precision (a specialized
// tiny model runs in well under a microsecond).
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// weftVersion is weft.Version plus the VCS revision the binary was built
// from, when the build recorded one.
func weftVersion() string {
	v := weft.Version
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			v += "+" + rev
			if dirty {
				v += "-dirty"
			}
		}
	}
	return v
}

func printBench(w io.Writer, r *benchResult) {
	opt := fmt.Sprintf("-O%d", r.OptLevel)
	if r.PlanOptions != "" {
		opt = "plan compiled with " + r.PlanOptions
	}
	fmt.Fprintf(w, "%s (%s, %d nodes) weft %s, %s %s\n", r.Model, opt, r.Nodes, r.WeftVersion, r.GoVersion, r.Platform)
	var names []string
	for k := range r.Inputs {
		names = append(names, k+" "+r.Inputs[k])
	}
	slices.Sort(names)
	fmt.Fprintf(w, "inputs:   %s\n", strings.Join(names, ", "))
	names = names[:0]
	for k := range r.Outputs {
		names = append(names, k+" "+r.Outputs[k])
	}
	slices.Sort(names)
	fmt.Fprintf(w, "outputs:  %s\n", strings.Join(names, ", "))
	fmt.Fprintf(w, "threads:  %d, set via %s\n", r.Threads, r.ThreadsMechanism)
	fmt.Fprintf(w, "load+compile: %.3f ms, first run %.3f ms, %d warm-up runs\n", r.CompileMs, r.FirstRunMs, r.Warmup)
	fmt.Fprintf(w, "latency:  median %.3f ms, p90 %.3f ms, min %.3f ms, max %.3f ms over %d runs\n",
		r.LatencyMsMedian, r.LatencyMsP90, r.LatencyMsMin, r.LatencyMsMax, r.Runs)
	fmt.Fprintf(w, "allocs:   %.1f per run, %.0f bytes per run (Go heap)\n", r.AllocsPerRun, r.AllocBytesPerRun)
	if r.PeakRSSBytes != nil {
		fmt.Fprintf(w, "peak RSS: %.1f MB\n", float64(*r.PeakRSSBytes)/1e6)
	} else {
		fmt.Fprintf(w, "peak RSS: n/a (not reported on %s)\n", r.Platform)
	}
}
