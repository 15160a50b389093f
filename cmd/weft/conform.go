package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft/conform"
)

func newConformCmd() *cobra.Command {
	var (
		jsonOut, baseline, mdOut string
		workers                  int
		timeout                  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "conform [flags] DIR...",
		Short: "run ONNX backend-test directories and compare the outputs",
		Long: "Run ONNX backend tests. A DIR holding model.onnx is one test; otherwise every\n" +
			"subdirectory that holds one is a test. Each test prints PASS, FAIL (with the\n" +
			"mismatch or error) or SKIP (weft reported the model unsupported); the last line\n" +
			"is \"N passed, N failed, N skipped\". The suite of a test is the base name of its\n" +
			"DIR argument. Exit status 3 when a test failed or a suite passed fewer tests\n" +
			"than --baseline demands.",
		Args: cobra.MinimumNArgs(1),
	}
	opts, targeted := addOptFlag(cmd), addTargetFlag(cmd)
	cmd.Flags().StringVar(&jsonOut, "json", "", "write per-test results and per-suite counts to FILE as JSON")
	cmd.Flags().StringVar(&baseline, "baseline", "", "JSON FILE mapping suite → minimum passed count; fail below it")
	cmd.Flags().StringVar(&mdOut, "markdown", "", "write the conformance status page (docs/conformance.md) to FILE")
	cmd.Flags().IntVarP(&workers, "jobs", "j", 2, "tests run at once")
	cmd.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "per-test time limit (a test that exceeds it FAILs)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
		var bl conform.Baseline
		if baseline != "" {
			var err error
			if bl, err = conform.ReadBaseline(baseline); err != nil {
				return err
			}
		}
		tests, err := conform.Discover(args...)
		if err != nil {
			return err
		}
		o := targeted(opts())
		r := conform.NewRunner(o)
		r.Workers, r.Timeout = workers, timeout
		placed := countTargetTests(r, o)
		results := r.Run(context.Background(), tests, func(res conform.Result) {
			fmt.Fprintln(out, res.Line())
		})
		if jsonOut != "" {
			if err := writeFile(jsonOut, func(f *os.File) error { return conform.WriteJSON(f, results) }); err != nil {
				return err
			}
		}
		if mdOut != "" {
			if err := writeFile(mdOut, func(f *os.File) error { return conform.WriteMarkdown(f, results, opts().OptLevel) }); err != nil {
				return err
			}
		}
		sum := conform.Summarize(results)
		var problems []string
		if bl != nil {
			problems = bl.Check(results)
			for _, p := range problems {
				fmt.Fprintf(errw, "baseline: %s\n", p)
			}
			for _, s := range bl.Missing(results) {
				fmt.Fprintf(errw, "baseline: note: suite %s was not run\n", s)
			}
		}
		placed.print(out, results)
		fmt.Fprintln(out, sum.String())
		if sum.Failed > 0 || len(problems) > 0 {
			return fmt.Errorf("%w: %d failed, %d suites below baseline", errTestsFailed, sum.Failed, len(problems))
		}
		return nil
	}
	return cmd
}

// writeFile creates path (and its directory) and fills it with fill.
func writeFile(path string, fill func(*os.File) error) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
