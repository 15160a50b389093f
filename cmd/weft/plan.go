package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/plan"
	"github.com/weftrt/weft/scheduler"
	"github.com/weftrt/weft/scheduler/profiles"
	"github.com/weftrt/weft/zoo"
)

// planFlags are the inputs of `weft plan`.
type planFlags struct {
	targets   []string
	profile   string
	place     []string
	dot, html string
	summary   bool
	threshold int64
	keep      float64
	batch     int
}

func newPlanCmd() *cobra.Command {
	var f planFlags
	list := false
	cmd := &cobra.Command{
		Use:   "plan MODEL|zoo:NAME [--target cpu,vulkan] [--profile NAME|FILE] [--place RULE]... [--dot FILE] [--html FILE]",
		Short: "show how a model splits across devices, why, and what it should cost",
		Long: "Optimize MODEL (.onnx, or zoo:NAME for a model of the built-in zoo) and schedule it,\n" +
			"then print the partitions with every node's device and placement cause, per-device\n" +
			"totals, transfers and an estimated timeline on the device profile.\n\n" +
			"--profile names a bundled profile (" + strings.Join(profiles.Names(), ", ") + ")\n" +
			"or a JSON file (see `weft calibrate` and docs/profiles.md). Devices the profile names\n" +
			"that this machine lacks are planned with stand-ins: the CPU reference op set for a\n" +
			"cpu entry, the entry's \"ops\" or scheduler.DefaultGPUOps for a gpu entry — a split\n" +
			"for a phone you do not have. --target keeps the devices of those names, backend\n" +
			"prefixes or kinds. --place RULE (OP=DEVICE, name:GLOB=DEVICE, *=DEVICE; later rules\n" +
			"win) pins nodes; a rule its device cannot honour falls back with a warning.",
	}
	opts := addOptFlag(cmd)
	fl := cmd.Flags()
	fl.StringSliceVar(&f.targets, "target", nil, "devices to plan for: names, backend names or kinds, comma-separated (default: all)")
	fl.StringVar(&f.profile, "profile", "", "device profile: a bundled name or a JSON file (default: generic numbers)")
	fl.StringArrayVar(&f.place, "place", nil, "placement rule OP=DEVICE, name:GLOB=DEVICE or *=DEVICE (repeatable)")
	fl.StringVar(&f.dot, "dot", "", "write the plan as Graphviz, coloured by device")
	fl.StringVar(&f.html, "html", "", "write a self-contained HTML view of the plan")
	fl.BoolVar(&f.summary, "summary", false, "print partitions and totals, not every node")
	fl.Int64Var(&f.threshold, "batch-threshold", 0, fmt.Sprintf("smallest batch for which weight-heavy ops go to a GPU (default %d)", scheduler.DefaultBatchThreshold))
	fl.Float64Var(&f.keep, "keep-factor", 0, fmt.Sprintf("keep a node with its inputs unless that is this many times slower (default %g)", scheduler.DefaultKeepFactor))
	fl.IntVar(&f.batch, "batch", 1, "batch size of a zoo model")
	fl.BoolVar(&list, "list-profiles", false, "list the bundled profiles")
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if list {
			return cobra.NoArgs(cmd, args)
		}
		if len(args) != 1 {
			return fmt.Errorf("plan wants exactly one MODEL (a .onnx file or zoo:NAME)")
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		w := cmd.OutOrStdout()
		if list {
			for _, name := range profiles.Names() {
				p, err := scheduler.LoadProfile(name)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "%-24s %s\n", name, p.Description)
			}
			return nil
		}
		g, closer, err := loadForPlan(args[0], f.batch)
		if err != nil {
			return err
		}
		if closer != nil {
			defer closer.Close()
		}
		o := opts()
		o.Place, o.Profile = f.place, f.profile
		if vk := vulkanTargets(f.targets); len(vk) > 0 {
			// As for run: every node Vulkan supports goes there, the rest
			// to the CPU (see applyTarget).
			if f.profile == "" {
				if err := checkTarget(vk); err != nil {
					return err
				}
			}
			o = applyTarget(o, f.targets)
			f.targets = o.Target
		}
		if _, err := weft.Optimize(g, o); err != nil {
			return fmt.Errorf("%s: %w", args[0], err)
		}
		p, rep, err := planFor(g, o, f)
		if err != nil {
			return fmt.Errorf("%s: %w", args[0], err)
		}
		printPlan(w, p, rep, f.summary)
		fmt.Fprintf(w, "placement: %s\n", countPlacement(p))
		declined := 0
		for _, msg := range rep.Warnings {
			if targetFallback(msg, f.targets) {
				declined++ // a node the target's Vulkan device declines: expected
				continue
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "weft: warning: %s\n", msg)
		}
		if declined > 0 {
			fmt.Fprintf(w, "%d nodes the Vulkan target declines run on the CPU (their placements say why)\n", declined)
		}
		if f.dot != "" {
			if err := writeFile(f.dot, func(f *os.File) error { return writeDot(f, p, rep) }); err != nil {
				return err
			}
		}
		if f.html != "" {
			if err := writeFile(f.html, func(f *os.File) error { return writeHTML(f, args[0], p, rep) }); err != nil {
				return err
			}
		}
		return nil
	}
	return cmd
}

// loadForPlan reads a model file, or builds zoo:NAME.
func loadForPlan(src string, batch int) (*ir.Graph, io.Closer, error) {
	if name, ok := strings.CutPrefix(src, "zoo:"); ok {
		g, err := zoo.Build(name, zoo.Options{Batch: batch})
		if err != nil {
			return nil, nil, err
		}
		if err := passes.InferShapes(g); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", src, err)
		}
		return g, nil, nil
	}
	return weft.Load(src)
}

// planFor schedules g on the devices the flags select.
func planFor(g *ir.Graph, o weft.Options, f planFlags) (*plan.Plan, *scheduler.Report, error) {
	real, err := backends.AllDevices()
	if err != nil {
		return nil, nil, err
	}
	so, err := weft.SchedulerOptions(nil, o)
	if err != nil {
		return nil, nil, err
	}
	so.Devices, err = planDevices(real, so.Profile, f.targets)
	if err != nil {
		return nil, nil, err
	}
	so.BatchThreshold, so.KeepFactor = f.threshold, f.keep
	return scheduler.ScheduleReport(g, so)
}

// planDevices returns the devices to plan for: with a profile, one per
// entry (the real device of that name when this machine has it, a
// stand-in otherwise); without, the real devices. targets filters both.
func planDevices(real []backends.Device, prof *scheduler.Profile, targets []string) ([]backends.Device, error) {
	var devs []backends.Device
	if prof == nil {
		devs = real
	} else {
		byName := map[string]backends.Device{}
		for _, d := range real {
			byName[d.Name()] = d
		}
		for _, e := range prof.Devices {
			// The real device of that name, unless it is of another kind
			// (lavapipe's vulkan:0 is no stand-in for a phone's GPU).
			if d, ok := byName[e.Name]; ok && d.Kind().String() == e.Kind {
				devs = append(devs, d)
				continue
			}
			var ops []string
			if e.Kind == "cpu" && e.Ops == nil {
				ops = ref.Ops() // what the CPU backend runs
			}
			devs = append(devs, scheduler.NewProfileDevice(e, ops))
		}
	}
	if len(targets) == 0 {
		return devs, nil
	}
	var out []backends.Device
	for _, t := range targets {
		found := false
		for _, d := range devs {
			if d.Name() == t || strings.HasPrefix(d.Name(), t+":") {
				found = true
				if !containsDevice(out, d) {
					out = append(out, d)
				}
			}
		}
		for _, d := range devs {
			// A kind only when no device has that name ("cpu" is the CPU
			// backend, not a software Vulkan device of kind CPU too).
			if !found && d.Kind().String() == t && !containsDevice(out, d) {
				out = append(out, d)
			}
		}
		if !found {
			found = slices.ContainsFunc(devs, func(d backends.Device) bool { return d.Kind().String() == t })
		}
		if !found {
			names := make([]string, len(devs))
			for i, d := range devs {
				names[i] = d.Name()
			}
			return nil, fmt.Errorf("--target %s: no such device (have: %s; a profile adds the devices it describes)", t, strings.Join(names, ", "))
		}
	}
	return out, nil
}

func containsDevice(ds []backends.Device, d backends.Device) bool {
	for _, x := range ds {
		if x.Name() == d.Name() {
			return true
		}
	}
	return false
}

// printPlan writes the partitions (each node with its cause) and the report.
func printPlan(w io.Writer, p *plan.Plan, rep *scheduler.Report, summary bool) {
	i := 0
	for _, part := range p.Partitions {
		fmt.Fprintf(w, "partition %d on %s: %d nodes, %d inputs, %d outputs\n",
			part.Index, part.Device, len(part.Nodes), len(part.Inputs), len(part.Outputs))
		for range part.Nodes {
			pd := rep.Placements[i]
			i++
			if summary {
				continue
			}
			mark := ""
			if pd.Warning {
				mark = " WARNING"
			}
			fmt.Fprintf(w, "  %-48s %-22s %s%s\n", pd.Node.String(), "["+string(pd.Cause)+"]", pd.Text, mark)
		}
	}
	fmt.Fprint(w, rep.Text())
}
