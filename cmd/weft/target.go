package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/vulkan"
	"github.com/weftrt/weft/conform"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// defaultTarget is what --target selects when it is not given: the CPU
// only, so that results do not depend on the GPUs of the machine.
var defaultTarget = []string{"cpu"}

// addTargetFlag registers --target on cmd (checked before the command
// runs) and returns a function that applies it to options; see
// applyTarget.
func addTargetFlag(cmd *cobra.Command) func(weft.Options) weft.Options {
	list := append([]string{}, defaultTarget...)
	cmd.Flags().StringSliceVar(&list, "target", list,
		"devices to run on, comma-separated: cpu, vulkan, vulkan:N (with vulkan, every node it supports runs there and the rest on the CPU)")
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if prev != nil {
			if err := prev(cmd, args); err != nil {
				return err
			}
		}
		return checkTarget(list)
	}
	return func(o weft.Options) weft.Options {
		if !cmd.Flags().Changed("target") {
			// No --target: the CPU, plus the Vulkan devices --place rules
			// name (those rules alone decide what runs there).
			o = applyTarget(o, list)
			for _, r := range o.Place {
				if i := strings.LastIndex(r, "="); i >= 0 && isVulkanTarget(r[i+1:]) && !slices.Contains(o.Target, r[i+1:]) {
					o.Target = append(o.Target, r[i+1:])
				}
			}
			return o
		}
		return applyTarget(o, list)
	}
}

// isVulkanTarget reports whether a --target entry names the Vulkan backend
// or one of its devices.
func isVulkanTarget(t string) bool {
	return t == vulkan.BackendName || strings.HasPrefix(t, vulkan.BackendName+":")
}

// checkTarget reports a --target entry that names no device, with the
// reason the Vulkan backend gives when it has no device.
func checkTarget(list []string) error {
	if len(list) == 0 {
		return fmt.Errorf("--target: empty (want cpu, vulkan or vulkan:N)")
	}
	if !slices.ContainsFunc(list, func(t string) bool { return t != "cpu" }) {
		return nil // the CPU is always there; probing Vulkan would load its drivers
	}
	all, err := backends.AllDevices()
	if err != nil {
		return err
	}
	for _, t := range list {
		found := false
		for _, d := range all {
			if d.Name() == t || strings.HasPrefix(d.Name(), t+":") || d.Kind().String() == t {
				found = true
			}
		}
		if found {
			continue
		}
		if isVulkanTarget(t) {
			var have []string
			for _, d := range all {
				if isVulkanTarget(d.Name()) {
					have = append(have, d.Name())
				}
			}
			if len(have) > 0 {
				return fmt.Errorf("--target %s: no such Vulkan device (have: %s)", t, strings.Join(have, ", "))
			}
			return fmt.Errorf("--target %s: no Vulkan device: %s", t, vulkan.Unavailable())
		}
		names := make([]string, len(all))
		for i, d := range all {
			names[i] = d.Name()
		}
		return fmt.Errorf("--target %s: no such device (have: %s)", t, strings.Join(names, ", "))
	}
	return nil
}

// applyTarget restricts o to the target's devices. A Vulkan target also
// brings the CPU (it runs what Vulkan declines, and the graph's inputs and
// outputs live there) and a leading placement rule *=DEVICE, so that every
// node the Vulkan device supports runs on it: a software Vulkan device
// (lavapipe) reports itself as a CPU and the cost model alone would never
// pick it. Rules given with --place come later and win.
func applyTarget(o weft.Options, list []string) weft.Options {
	o.Target = append([]string{}, list...)
	var rules []string
	hasCPU := false
	for _, t := range list {
		if t == "cpu" {
			hasCPU = true
		}
		if isVulkanTarget(t) {
			rules = append(rules, "*="+t)
		}
	}
	if len(rules) > 0 && !hasCPU {
		o.Target = append([]string{"cpu"}, o.Target...)
	}
	if len(rules) > 0 {
		o.Place = append(rules[len(rules)-1:], o.Place...)
	}
	return o
}

// placementCounts counts the plan's nodes per device (Transfer nodes
// apart) and its transfers with their bytes.
type placementCounts struct {
	nodes         map[string]int
	transfers     int
	transferBytes int64
}

func countPlacement(p *plan.Plan) placementCounts {
	c := placementCounts{nodes: map[string]int{}}
	for _, part := range p.Partitions {
		for _, n := range part.Nodes {
			if n.Op == ir.OpTransfer {
				c.transfers++
				if v := n.In(0); v != nil && v.Shape.Static() && v.DType.Valid() {
					c.transferBytes += v.DType.Bytes(v.Shape.NumElements())
				}
				continue
			}
			c.nodes[part.Device]++
		}
	}
	return c
}

// String renders "12 nodes on vulkan:0, 3 on cpu; 0 transfers (0 bytes)",
// devices by descending count.
func (c placementCounts) String() string {
	devs := make([]string, 0, len(c.nodes))
	for d := range c.nodes {
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool {
		if c.nodes[devs[i]] != c.nodes[devs[j]] {
			return c.nodes[devs[i]] > c.nodes[devs[j]]
		}
		return devs[i] < devs[j]
	})
	parts := make([]string, len(devs))
	for i, d := range devs {
		parts[i] = fmt.Sprintf("%d on %s", c.nodes[d], d)
		if i == 0 {
			parts[i] = fmt.Sprintf("%d nodes on %s", c.nodes[d], d)
		}
	}
	if len(parts) == 0 {
		parts = []string{"no nodes"}
	}
	return fmt.Sprintf("%s; %d transfers (%d bytes)", strings.Join(parts, ", "), c.transfers, c.transferBytes)
}

// printPlacement writes the placement line of a model's plan when its
// target is not the default.
func printPlacement(w io.Writer, o weft.Options, p *plan.Plan) {
	if p == nil || strings.Join(o.Target, ",") == strings.Join(defaultTarget, ",") {
		return
	}
	fmt.Fprintf(w, "placement: %s\n", countPlacement(p))
}

// vulkanTargets returns the Vulkan entries of a --target list.
func vulkanTargets(list []string) []string {
	var vk []string
	for _, t := range list {
		if isVulkanTarget(t) {
			vk = append(vk, t)
		}
	}
	return vk
}

// targetFallback reports whether a placement warning is the fallback of
// the rule a Vulkan target adds (a node that device declines).
func targetFallback(warning string, list []string) bool {
	for _, t := range vulkanTargets(list) {
		if strings.Contains(warning, ": --place *="+t+": ") {
			return true
		}
	}
	return false
}

// targetTests records, per conformance test, how many of its nodes ran on
// each non-CPU device of the target.
type targetTests struct {
	mu    sync.Mutex
	nodes map[string]map[string]int // test dir → device → nodes
}

// countTargetTests wraps r.Open to record the placement of every model it
// compiles; nil when o targets the CPU only.
func countTargetTests(r *conform.Runner, o weft.Options) *targetTests {
	if len(vulkanTargets(o.Target)) == 0 {
		return nil
	}
	tt := &targetTests{nodes: map[string]map[string]int{}}
	open := r.Open
	r.Open = func(path string, feeds []*ir.Tensor) (conform.Model, error) {
		m, err := open(path, feeds)
		if wm, ok := m.(*weft.Model); ok && err == nil && wm.Plan != nil {
			c := countPlacement(wm.Plan)
			tt.mu.Lock()
			tt.nodes[filepath.Dir(path)] = c.nodes
			tt.mu.Unlock()
		}
		return m, err
	}
	return tt
}

// print writes, per non-CPU device, how many passing tests ran nodes there.
func (tt *targetTests) print(w io.Writer, results []conform.Result) {
	if tt == nil {
		return
	}
	tests, nodes := map[string]int{}, map[string]int{}
	for _, res := range results {
		if res.Status != conform.Pass {
			continue
		}
		for dev, n := range tt.nodes[res.Dir] {
			if dev != "cpu" && n > 0 {
				tests[dev]++
				nodes[dev] += n
			}
		}
	}
	devs := make([]string, 0, len(tests))
	for d := range tests {
		devs = append(devs, d)
	}
	sort.Strings(devs)
	if len(devs) == 0 {
		fmt.Fprintln(w, "target: no passing test ran a node off the CPU")
	}
	for _, d := range devs {
		fmt.Fprintf(w, "target: %d passing tests ran nodes on %s (%d nodes in all)\n", tests[d], d, nodes[d])
	}
}
