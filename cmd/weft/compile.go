package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/plan"
	"github.com/weftrt/weft/scheduler"
)

func newCompileCmd() *cobra.Command {
	var (
		out, quantize, policy, printAfter, exName string
		layers, pins, dims                        []string
		report                                    bool
	)
	cmd := &cobra.Command{
		Use:   "compile MODEL [-o FILE.wplan] | compile --example NAME -o FILE.wplan",
		Short: "compile a model into a plan file (.wplan) that `weft run` opens without compiling",
		Long: "Compile MODEL (.onnx) — optimization passes, quantization, scheduling, memory\n" +
			"planning — and write the result to a plan file (default: MODEL with the extension\n" +
			".wplan). `weft run FILE.wplan` runs it without compiling again; the weights are\n" +
			"memory-mapped from the file. The same model and options always give the same\n" +
			"bytes. --report prints what compilation did and what the plan costs.\n" +
			"--dim SYM=N compiles a model with symbolic dimensions (dynamic batch or\n" +
			"sequence) for those sizes: every shape static, fast kernels, planned memory.\n" +
			"A plan left symbolic compiles a variant for each new binding when it runs\n" +
			"(shape specialization), which costs time at its first run per shape.",
	}
	opts := addOptFlag(cmd)
	placed, targeted := addPlaceFlags(cmd), addTargetFlag(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "the plan file to write (default: MODEL.wplan)")
	cmd.Flags().StringVar(&quantize, "quantize", "", "quantize weights: "+strings.Join(passes.QuantTypes, ", "))
	cmd.Flags().StringVar(&policy, "policy", "", "which weights --quantize takes: "+
		strings.Join([]string{passes.PolicyDefault + " (default)", passes.PolicyAll, passes.PolicyFFNOnly}, ", "))
	cmd.Flags().StringSliceVar(&layers, "layers", nil, "quantize exactly these weights (constant or node names, comma-separated)")
	cmd.Flags().StringArrayVar(&pins, "pin", nil, "run a node or op type on a device (NAME=DEVICE; repeatable)")
	cmd.Flags().StringVar(&printAfter, "print-after", "", "print the IR text after this pass (names: "+strings.Join(passes.Names(), ", ")+")")
	cmd.Flags().StringArrayVar(&dims, "dim", nil, "compile for size N of symbolic dimension SYM (SYM=N; repeatable)")
	cmd.Flags().BoolVar(&report, "report", false, "print nodes before/after, what each pass changed, peak memory and cost estimates")
	cmd.Flags().StringVar(&exName, "example", "", "compile a model built into weft instead of a file: "+exampleNames())
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if exName != "" && len(args) != 0 || exName == "" && len(args) != 1 {
			return fmt.Errorf("compile wants exactly one MODEL file, or --example NAME")
		}
		if exName != "" && out == "" {
			return fmt.Errorf("compile --example needs -o FILE.wplan")
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		w := cmd.OutOrStdout()
		o := targeted(placed(opts()))
		if (policy != "" || len(layers) > 0) && quantize == "" {
			return fmt.Errorf("--policy and --layers select weights for --quantize, which is not given")
		}
		o.Quantize = passes.QuantizeOptions{Type: quantize, Policy: policy, Layers: layers}
		if len(pins) > 0 {
			o.Pins = map[string]string{}
			for _, p := range pins {
				k, dev, ok := strings.Cut(p, "=")
				if !ok || k == "" || dev == "" {
					return fmt.Errorf("--pin %q: want NAME=DEVICE", p)
				}
				o.Pins[k] = dev
			}
		}
		if printAfter != "" {
			o.PrintAfter, o.PrintOut = printAfter, w
		}

		var g *ir.Graph
		src := ""
		if exName != "" {
			ex, ok := examples[exName]
			if !ok {
				return fmt.Errorf("unknown example %q (have: %s)", exName, exampleNames())
			}
			var err error
			if g, err = ex.build(); err != nil {
				return fmt.Errorf("example %s: %w", exName, err)
			}
			src = "example-" + exName
		} else {
			src = args[0]
			if weft.IsPlanFile(src) {
				return fmt.Errorf("%s is already a compiled plan", src)
			}
			gr, closer, err := weft.Load(src)
			if err != nil {
				return err
			}
			// The graph's constants alias the model file until the plan is written.
			defer closer.Close()
			g = gr
			if out == "" {
				out = strings.TrimSuffix(src, filepath.Ext(src)) + weft.PlanExt
			}
		}
		if len(dims) > 0 {
			dimVals, err := parseDimFlags(dims)
			if err != nil {
				return err
			}
			if err := weft.BindDims(g, dimVals); err != nil {
				return fmt.Errorf("%s: %w", src, err)
			}
		}
		before := passes.CountNodes(g)
		p, rep, err := weft.Compile(g, o)
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		if err := weft.SavePlan(out, p, o, src); err != nil {
			return err
		}
		fi, err := os.Stat(out)
		if err != nil {
			return err
		}
		_, weights := g.NumParams()
		fmt.Fprintf(w, "wrote %s (%s: %s of weights), %s\n", out, humanBytes(fi.Size()), humanBytes(weights), weft.OptionsString(o))
		printPlacement(w, o, p)
		if report {
			writeReport(w, before, p, rep)
		}
		return nil
	}
	return cmd
}

// writeReport prints what `weft compile --report` shows.
func writeReport(w io.Writer, before int, p *plan.Plan, rep *passes.Report) {
	fmt.Fprintf(w, "nodes    %d before, %d after\n", before, passes.CountNodes(p.Graph))
	if rep != nil {
		fmt.Fprint(w, rep.String())
	}
	naive, planned := p.MemoryStats()
	saved := ""
	switch {
	case naive > 0 && planned <= naive:
		saved = fmt.Sprintf(" (%.0f%% less)", 100*float64(naive-planned)/float64(naive))
	case naive > 0:
		saved = fmt.Sprintf(" (%.0f%% more: %d-byte alignment padding)", 100*float64(planned-naive)/float64(naive), plan.Align)
	}
	fmt.Fprintf(w, "memory   peak activations: naive %s, planned %s%s\n", humanBytes(naive), humanBytes(planned), saved)
	c := scheduler.GraphCost(p.Graph)
	note := ""
	if c.Unknown > 0 {
		note = fmt.Sprintf("; %d nodes with dynamic shapes not counted", c.Unknown)
	}
	fmt.Fprintf(w, "cost     %s FLOPs, %s moved (estimates per run; subgraph bodies counted once%s)\n",
		humanCount(c.FLOPs), humanBytes(c.Bytes), note)
	fmt.Fprintf(w, "plan     %d partitions:", len(p.Partitions))
	for _, part := range p.Partitions {
		fmt.Fprintf(w, " %s×%d", part.Device, len(part.Nodes))
	}
	fmt.Fprintln(w)
}

// countNodes counts the nodes of g and all its subgraphs.

// humanCount renders a count with a decimal SI prefix: 1.23 G.
func humanCount(n int64) string {
	f := float64(n)
	for _, u := range []string{"", " k", " M", " G", " T"} {
		if f < 1000 || u == " T" {
			if u == "" {
				return fmt.Sprintf("%d", n)
			}
			return fmt.Sprintf("%.3g%s", f, u)
		}
		f /= 1000
	}
	return fmt.Sprint(n)
}
