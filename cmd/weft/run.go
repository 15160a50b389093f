package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/examples/mlp/model"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/npy"
	"github.com/weftrt/weft/runtime"
)

// example is a model built in code, with its own inputs.
type example struct {
	build  func() (*ir.Graph, error)
	inputs func() map[string]*ir.Tensor
}

// examples are the models `--example NAME` selects.
var examples = map[string]example{
	"mlp": {build: model.Build, inputs: func() map[string]*ir.Tensor { return map[string]*ir.Tensor{"x": model.Input()} }},
}

func exampleNames() string {
	var names []string
	for k := range examples {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func newRunCmd() *cobra.Command {
	var (
		inputs  []string
		dims    []string
		outDir  string
		exName  string
		verbose bool
		verifyW bool
		trace   string
	)
	cmd := &cobra.Command{
		Use:   "run MODEL | run --example NAME",
		Short: "compile a model (or open a compiled .wplan plan) and run it once on .npy or generated inputs",
		Long: "Compile MODEL (.onnx), or open a plan written by `weft compile` (.wplan: no\n" +
			"compiling, weights mapped from the file), run it once and print every output's\n" +
			"dtype, shape and a summary, plus timings. Inputs not given with --input get\n" +
			"deterministic values seeded by the input's name: floats uniform in [-1,1),\n" +
			"integers in [0,4), bools alternating true/false. Symbolic dimensions need\n" +
			"--dim SYM=N (or an --input); the run then uses a variant of the model compiled\n" +
			"for those sizes (shape specialization; -v says so).",
	}
	baseOpts := addOptFlag(cmd)
	placed, targeted := addPlaceFlags(cmd), addTargetFlag(cmd)
	threads := 0
	cmd.Flags().IntVar(&threads, "threads", 0, "worker threads of the CPU kernels (0: all cores)")
	opts := func() weft.Options {
		o := targeted(placed(baseOpts()))
		o.Threads = threads
		return o
	}
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "bind input NAME to the array in FILE.npy (NAME=FILE.npy; repeatable)")
	cmd.Flags().StringArrayVar(&dims, "dim", nil, "size of symbolic dimension SYM for generated inputs (SYM=N; repeatable)")
	cmd.Flags().StringVar(&outDir, "output-dir", "", "write each output to DIR/NAME.npy")
	cmd.Flags().StringVar(&exName, "example", "", "run a model built into weft instead of a file: "+exampleNames())
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also print the pass report and the device plan")
	cmd.Flags().StringVar(&trace, "trace", "", "write a Chrome-trace/Perfetto JSON timeline of the run (per-node spans per device) to FILE.json")
	cmd.Flags().BoolVar(&verifyW, "verify-weights", false, "for a .wplan plan: check the weights' checksum first (reads all of them)")
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if exName != "" && len(args) != 0 || exName == "" && len(args) != 1 {
			return fmt.Errorf("run wants exactly one MODEL file, or --example NAME")
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		out := cmd.OutOrStdout()
		given, err := parseInputFlags(inputs)
		if err != nil {
			return err
		}
		dimVals, err := parseDimFlags(dims)
		if err != nil {
			return err
		}
		t0 := time.Now()
		var m *weft.Model
		var feed map[string]*ir.Tensor
		what := ""
		if exName != "" {
			ex, ok := examples[exName]
			if !ok {
				return fmt.Errorf("unknown example %q (have: %s)", exName, exampleNames())
			}
			g, err := ex.build()
			if err != nil {
				return fmt.Errorf("example %s: %w", exName, err)
			}
			if m, err = weft.New(g, opts()); err != nil {
				return fmt.Errorf("example %s: %w", exName, err)
			}
			feed, what = ex.inputs(), "example "+exName
		} else {
			o := opts()
			o.VerifyWeights = verifyW
			if verbose {
				o.SpecializeLog = cmd.ErrOrStderr()
			}
			if m, err = weft.Open(args[0], o); err != nil {
				return err
			}
			what = args[0]
		}
		defer m.Close()
		compile := time.Since(t0)
		if feed == nil {
			feed = map[string]*ir.Tensor{}
		}
		if err := bindInputs(m.Inputs(), given, dimVals, feed); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		ctx, tr := context.Background(), runtime.NewTrace()
		if trace != "" {
			ctx = backends.WithTracer(ctx, tr)
		}
		t1 := time.Now()
		outs, err := m.Run(ctx, feed)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		runTime := time.Since(t1)

		if m.PlanMeta != nil { // a compiled plan: its own options apply
			fmt.Fprintf(out, "%s (plan compiled with %s)\n", what, m.PlanMeta["options"])
		} else {
			fmt.Fprintf(out, "%s (-O%d)\n", what, opts().OptLevel)
		}
		for _, v := range m.Inputs() {
			if t := feed[v.Name]; t != nil && !v.IsConst() {
				fmt.Fprintf(out, "input  %s\n", summarize(v.Name, t))
			}
		}
		names := m.OutputNames()
		for _, name := range names {
			t, ok := outs[name]
			if !ok {
				return fmt.Errorf("%s: the run returned no output %q", what, name)
			}
			fmt.Fprintf(out, "output %s\n", summarize(name, t))
		}
		if trace != "" {
			if err := writeFile(trace, func(f *os.File) error { return tr.WriteChromeJSON(f) }); err != nil {
				return err
			}
			fmt.Fprintf(out, "wrote trace %s\n", trace)
		}
		printPlacement(out, opts(), m.Plan)
		if outDir != "" {
			if err := writeOutputs(out, outDir, names, outs); err != nil {
				return err
			}
		}
		if verbose {
			if m.Report != nil {
				fmt.Fprintln(out, strings.TrimRight(m.Report.String(), "\n"))
			}
			if m.Plan != nil {
				fmt.Fprintln(out, strings.TrimRight(m.Plan.Text(), "\n"))
			}
		}
		fmt.Fprintf(out, "timings: load+compile %v, run %v\n", round(compile), round(runTime))
		return nil
	}
	return cmd
}

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// parseInputFlags parses NAME=FILE pairs.
func parseInputFlags(flags []string) (map[string]string, error) {
	m := map[string]string{}
	for _, f := range flags {
		name, file, ok := strings.Cut(f, "=")
		if !ok || name == "" || file == "" {
			return nil, fmt.Errorf("--input %q: want NAME=FILE.npy", f)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("--input %s given twice", name)
		}
		m[name] = file
	}
	return m, nil
}

// parseDimFlags parses SYM=N pairs.
func parseDimFlags(flags []string) (map[string]int64, error) {
	m := map[string]int64{}
	for _, f := range flags {
		sym, val, ok := strings.Cut(f, "=")
		n, err := strconv.ParseInt(val, 10, 64)
		if !ok || sym == "" || err != nil || n < 0 {
			return nil, fmt.Errorf("--dim %q: want SYM=N with N >= 0", f)
		}
		m[sym] = n
	}
	return m, nil
}

// bindInputs fills feed for every non-constant model input not already in
// it: from the file given with --input, else with generated values. Every
// --input must name a model input.
func bindInputs(inputs []*ir.Value, given map[string]string, dims map[string]int64, feed map[string]*ir.Tensor) error {
	known := map[string]bool{}
	var names []string
	for _, v := range inputs {
		if v.IsConst() {
			continue
		}
		known[v.Name] = true
		names = append(names, v.Name)
	}
	for name := range given {
		if !known[name] {
			return fmt.Errorf("--input %s: the model has no input %q (inputs: %s)", name, name, strings.Join(names, ", "))
		}
	}
	for _, v := range inputs {
		if v.IsConst() {
			continue
		}
		if file, ok := given[v.Name]; ok {
			t, err := npy.ReadFile(file)
			if err != nil {
				return fmt.Errorf("input %s: %w", v.Name, err)
			}
			if err := checkInput(v, t); err != nil {
				return fmt.Errorf("input %s: %s: %w", v.Name, file, err)
			}
			feed[v.Name] = t
			continue
		}
		if feed[v.Name] != nil {
			continue
		}
		t, err := generate(v, dims)
		if err != nil {
			return err
		}
		feed[v.Name] = t
	}
	return nil
}

// checkInput reports a dtype or shape that does not fit the model input.
func checkInput(v *ir.Value, t *ir.Tensor) error {
	if v.DType != ir.Invalid && t.DType != v.DType {
		return fmt.Errorf("the file holds %v%v, the model wants dtype %v", t.DType, t.Shape, v.DType)
	}
	if !v.Shape.Compatible(ir.ShapeOf(t.Shape)) {
		return fmt.Errorf("the file holds shape %v, the model wants [%v]", t.Shape, v.Shape)
	}
	return nil
}

// summarize renders one line about a tensor: name, dtype[shape], min, max,
// mean and the first values.
func summarize(name string, t *ir.Tensor) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %v[%v]", name, t.DType, ir.ShapeOf(t.Shape))
	n := t.Len()
	if n == 0 || len(t.Data) < t.Bytes() {
		sb.WriteString(" (empty)")
		return sb.String()
	}
	st := stats(t)
	sb.WriteString("  " + st)
	const show = 8
	vals := make([]string, 0, show)
	for i := 0; i < n && i < show; i++ {
		vals = append(vals, formatElem(t, i))
	}
	more := ""
	if n > show {
		more = " …"
	}
	fmt.Fprintf(&sb, "  [%s%s]", strings.Join(vals, " "), more)
	return sb.String()
}

// writeOutputs writes each output to dir/NAME.npy, with NAME made safe
// for a file name.
func writeOutputs(out io.Writer, dir string, names []string, outs map[string]*ir.Tensor) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	used := map[string]bool{}
	for k, name := range names {
		file := fileName(name, k, used)
		t := outs[name]
		p := filepath.Join(dir, file)
		if err := npy.WriteFile(p, t); err != nil {
			return fmt.Errorf("output %s: %w", name, err)
		}
		note := ""
		if st := npy.StoredAs(t.DType); st != t.DType {
			note = fmt.Sprintf(" (%v stored as %v: NumPy has no %v)", t.DType, st, t.DType)
		}
		fmt.Fprintf(out, "wrote %s%s\n", p, note)
	}
	return nil
}

// fileName turns an output name into a unique, safe file name NAME.npy:
// characters outside [A-Za-z0-9._-] become '_', and a name that would be
// empty, hidden or repeated gets the output's index.
func fileName(name string, k int, used map[string]bool) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "" || strings.Trim(s, ".") == "" || s[0] == '.' {
		s = fmt.Sprintf("output_%d", k)
	}
	if len(s) > 200 {
		s = s[:200]
	}
	base := s
	for i := 1; used[strings.ToLower(s)]; i++ {
		s = fmt.Sprintf("%s_%d", base, i)
	}
	used[strings.ToLower(s)] = true
	return s + ".npy"
}
