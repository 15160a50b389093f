package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
)

// errTestsFailed is returned by `weft conform` when it ran to completion
// but some test failed or a baseline was missed; it maps to exit status 3.
var errTestsFailed = errors.New("conformance run failed")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errTestsFailed):
		fmt.Fprintf(stderr, "weft: %v\n", err)
		return 3
	default:
		fmt.Fprintf(stderr, "weft: %v\n", err)
		return 1
	}
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "weft",
		Short: "weft compiles neural-network models and runs them on the devices at hand",
		Long: "weft is a graph compiler and runtime for on-device inference:\n" +
			"import (ONNX) → optimize → schedule → run.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newCompileCmd(), newRunCmd(), newInspectCmd(), newConformCmd(), newZooCmd(), newBenchCmd(), newTokenizeCmd())
	root.AddCommand(newPlanCmd(), newCalibrateCmd())
	root.AddCommand(newGenerateCmd())
	root.AddCommand(newMkLLMCmd(), newQuantizeCmd(), newChatCmd())
	return root
}

// optLevel is the -O flag shared by every command that compiles.
type optLevel int

func (o *optLevel) String() string { return strconv.Itoa(int(*o)) }
func (o *optLevel) Type() string   { return "level" }
func (o *optLevel) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 2 {
		return fmt.Errorf("optimization level %q: want 0, 1 or 2", s)
	}
	*o = optLevel(n)
	return nil
}

// addPlaceFlags registers --place and --profile (device placement) on cmd
// and returns a function that applies them to options.
func addPlaceFlags(cmd *cobra.Command) func(weft.Options) weft.Options {
	var place []string
	var profile string
	cmd.Flags().StringArrayVar(&place, "place", nil, "placement rule OP=DEVICE, name:GLOB=DEVICE or *=DEVICE (repeatable; later rules win)")
	cmd.Flags().StringVar(&profile, "profile", "", "device profile for the cost model: a bundled name or a JSON file")
	return func(o weft.Options) weft.Options {
		o.Place, o.Profile = place, profile
		return o
	}
}

// addOptFlag registers the compile flags (-O, --verify) on cmd and returns
// a function giving the options they select.
func addOptFlag(cmd *cobra.Command) func() weft.Options {
	lvl := optLevel(weft.DefaultOptions().OptLevel)
	verify := false
	cmd.Flags().VarP(&lvl, "opt", "O", "optimization level: 0 (none), 1 or 2 (all passes)")
	cmd.Flags().BoolVar(&verify, "verify", false, "run the IR verifier between passes")
	return func() weft.Options {
		opts := weft.DefaultOptions()
		opts.OptLevel = int(lvl)
		opts.Verify = verify
		opts.Target = defaultTarget // commands with --target replace it (target.go)
		return opts
	}
}
