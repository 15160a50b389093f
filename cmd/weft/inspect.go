package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
)

func newInspectCmd() *cobra.Command {
	var exName string
	cmd := &cobra.Command{
		Use:   "inspect MODEL | inspect --example NAME",
		Short: "describe a model as imported: inputs, outputs, op counts, parameters, opsets",
		Long: "Describe a model as imported (no optimization passes): inputs and outputs with\n" +
			"dtypes and shapes (symbolic dimensions by name; output types come from shape\n" +
			"inference), the number of nodes, a histogram of op types, the parameter count\n" +
			"and size, and the opset versions. For a GGUF file: its version, metadata (long\n" +
			"arrays summarized) and a table of its tensors (shapes outermost dimension first).",
		Args: func(cmd *cobra.Command, args []string) error {
			if exName != "" && len(args) != 0 || exName == "" && len(args) != 1 {
				return fmt.Errorf("inspect wants exactly one MODEL file, or --example NAME")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var g *ir.Graph
			what := ""
			if exName != "" {
				ex, ok := examples[exName]
				if !ok {
					return fmt.Errorf("unknown example %q (have: %s)", exName, exampleNames())
				}
				var err error
				if g, err = ex.build(); err != nil {
					return fmt.Errorf("example %s: %w", exName, err)
				}
				what = "example " + exName
			} else if isGGUF(args[0]) {
				return inspectGGUF(cmd.OutOrStdout(), args[0])
			} else {
				gr, closer, err := weft.Load(args[0])
				if err != nil {
					return err
				}
				defer closer.Close()
				g, what = gr, args[0]
			}
			// Shape inference only fills in types; it does not change the
			// graph, so the summary still describes the model as imported.
			if err := passes.InferShapes(g); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: shape inference: %v\n", err)
			}
			describe(cmd.OutOrStdout(), what, g)
			return nil
		},
	}
	cmd.Flags().StringVar(&exName, "example", "", "inspect a model built into weft: "+exampleNames())
	return cmd
}

// describe prints the summary `weft inspect` shows.
func describe(w io.Writer, what string, g *ir.Graph) {
	fmt.Fprintf(w, "model   %s\n", what)
	if g.Name != "" {
		fmt.Fprintf(w, "graph   %s\n", g.Name)
	}
	if len(g.Opsets) > 0 {
		var ops []string
		for _, d := range sortedKeys(g.Opsets) {
			name := d
			if name == "" {
				name = "ai.onnx"
			}
			ops = append(ops, fmt.Sprintf("%s %d", name, g.Opsets[d]))
		}
		fmt.Fprintf(w, "opsets  %s\n", strings.Join(ops, ", "))
	}
	for _, k := range sortedKeys(g.Meta) {
		if v := oneLine(g.Meta[k]); v != "" {
			fmt.Fprintf(w, "meta    %s: %s\n", k, v)
		}
	}
	fmt.Fprintf(w, "inputs\n")
	for _, v := range g.Inputs {
		fmt.Fprintf(w, "  %-20s %s\n", v.Name, typeString(v))
	}
	fmt.Fprintf(w, "outputs\n")
	for _, v := range g.Outputs {
		fmt.Fprintf(w, "  %-20s %s\n", v.Name, typeString(v))
	}
	hist := map[string]int{}
	nodes, subgraphs := 0, -1
	g.Walk(func(sg *ir.Graph) {
		subgraphs++
		for _, n := range sg.Nodes {
			hist[n.Op]++
			nodes++
		}
	})
	elems, bytes := g.NumParams()
	sub := ""
	if subgraphs > 0 {
		sub = fmt.Sprintf(" (%d in %d subgraph%s)", nodes-len(g.Nodes), subgraphs, map[bool]string{true: "s"}[subgraphs > 1])
	}
	fmt.Fprintf(w, "nodes   %d%s\n", nodes, sub)
	fmt.Fprintf(w, "params  %s elements, %s\n", groupDigits(elems), humanBytes(bytes))
	ops := sortedKeys(hist)
	sort.SliceStable(ops, func(i, j int) bool { return hist[ops[i]] > hist[ops[j]] })
	fmt.Fprintf(w, "ops     %d kinds\n", len(ops))
	for _, op := range ops {
		fmt.Fprintf(w, "  %6d  %s\n", hist[op], op)
	}
}

// typeString renders dtype[shape], symbolic dims by name ("?" when unknown).
func typeString(v *ir.Value) string {
	dt := "?"
	if v.DType != ir.Invalid {
		dt = v.DType.String()
	}
	if v.Shape == nil {
		return dt + "[?]"
	}
	return fmt.Sprintf("%s[%v]", dt, v.Shape)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}
