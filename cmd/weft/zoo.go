package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft/frontend/onnx"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/zoo"
)

func newZooCmd() *cobra.Command {
	var (
		out   string
		opts  zoo.Options
		opset int64
		list  bool
	)
	cmd := &cobra.Command{
		Use:   "zoo NAME -o FILE.onnx | zoo --list",
		Short: "write a model of the built-in zoo (random weights) as an ONNX file",
		Long: "Build a benchmark-shaped model in the form ONNX exporters produce, with\n" +
			"deterministic random weights from --seed, and write it as ONNX (for running\n" +
			"with weft or with other runtimes). Shapes are inferred before writing, so the\n" +
			"file declares every value's type. Models: " + strings.Join(zoo.Names(), ", ") + ".",
		Args: func(cmd *cobra.Command, args []string) error {
			if list {
				return cobra.NoArgs(cmd, args)
			}
			if len(args) != 1 {
				return fmt.Errorf("zoo wants exactly one model NAME (one of %s), or --list", strings.Join(zoo.Names(), ", "))
			}
			if out == "" {
				return fmt.Errorf("zoo %s: no output file (-o FILE.onnx)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			if list {
				for _, name := range zoo.Names() {
					fmt.Fprintf(w, "%-10s %s\n", name, zoo.About(name))
				}
				return nil
			}
			g, err := zoo.Build(args[0], opts)
			if err != nil {
				return err
			}
			if err := passes.InferShapes(g); err != nil {
				return fmt.Errorf("zoo %s: %w", args[0], err)
			}
			if err := onnx.WriteFile(out, g, opset); err != nil {
				return err
			}
			elems, bytes := g.NumParams()
			st, err := os.Stat(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s: %s, %d nodes, %d constant elements (%.1f MB), opset %d, %.1f MB file\n",
				out, args[0], len(g.Nodes), elems, float64(bytes)/1e6, opset, float64(st.Size())/1e6)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "the ONNX file to write")
	f.IntVar(&opts.Batch, "batch", 1, "batch size")
	f.IntVar(&opts.Seq, "seq", 0, "sequence length of the transformer models (default: the model's)")
	f.Int64Var(&opts.Seed, "seed", 1, "seed of the random weights")
	f.BoolVar(&opts.Symbolic, "symbolic", false, "symbolic batch and sequence dimensions (shapes computed at run time)")
	f.Int64Var(&opset, "opset", 17, fmt.Sprintf("default-domain opset to write (%d..%d)", onnx.MinWriteOpset, onnx.MaxWriteOpset))
	f.BoolVar(&list, "list", false, "list the models")
	return cmd
}
