package weft

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/plan"
	"github.com/weftrt/weft/runtime"
)

// Compiled plans: writing a scheduled plan to a .wplan file and running one
// without compiling again. The format is described in docs/plan-format.md.

// Version is the weft version recorded in the plan files it writes.
const Version = "0.1.0-dev"

// PlanExt is the file extension of compiled plans.
const PlanExt = ".wplan"

// IsPlanFile reports whether path names a compiled plan (by its extension).
func IsPlanFile(path string) bool { return strings.EqualFold(filepath.Ext(path), PlanExt) }

// PlanMeta returns the metadata weft records in a plan file: the producer,
// weft's version, the compile options and the source model's base name.
// It holds nothing that varies between runs (no time, no path), so that
// compiling the same model with the same options gives the same bytes.
func PlanMeta(opts Options, source string) map[string]string {
	return map[string]string{
		"producer":     "weft",
		"weft_version": Version,
		"options":      OptionsString(opts),
		"source":       filepath.Base(source),
	}
}

// OptionsString renders the options that shape a compiled plan, in a
// fixed order: "-O2 quantize=q8_0 policy=all layers=a,b pin=Op=dev".
func OptionsString(opts Options) string {
	parts := []string{fmt.Sprintf("-O%d", opts.OptLevel)}
	q := opts.Quantize
	if q.Type != "" {
		parts = append(parts, "quantize="+q.Type)
	}
	if q.Policy != "" {
		parts = append(parts, "policy="+q.Policy)
	}
	if len(q.Layers) > 0 {
		parts = append(parts, "layers="+strings.Join(q.Layers, ","))
	}
	keys := make([]string, 0, len(opts.Pins))
	for k := range opts.Pins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, "pin="+k+"="+opts.Pins[k])
	}
	return strings.Join(parts, " ")
}

// SavePlan writes the compiled plan p to path (see plan.WriteFile),
// recording opts and the source model's name in its metadata. Devices that
// repack constants for their kernels (backends.Prepacker: the CPU's SGEMM
// weight panels) store the packed copies too, so that opening the plan
// does not pack again (WEFT_PREPACK=0 leaves them out).
func SavePlan(path string, p *plan.Plan, opts Options, source string) error {
	packed, err := exportPrepacked(p)
	if err != nil {
		return fmt.Errorf("weft: %s: %w", path, err)
	}
	return plan.WriteFilePrepacked(path, p, PlanMeta(opts, source), packed)
}

// exportPrepacked collects the prepacked constants of p's partitions from
// their devices.
func exportPrepacked(p *plan.Plan) ([]plan.Prepacked, error) {
	devs, err := backends.AllDevices()
	if err != nil {
		// Prepacked blobs only save work at open: the plan is complete
		// without them.
		return nil, nil
	}
	var out []plan.Prepacked
	seen := map[string]bool{}
	for _, part := range p.Partitions {
		for _, d := range devs {
			pp, ok := d.(backends.Prepacker)
			if !ok || d.Name() != part.Device {
				continue
			}
			blobs, err := pp.ExportPrepacked(p, part)
			if err != nil {
				return nil, err
			}
			for _, b := range blobs {
				// Partitions sharing a constant pack it the same way once.
				k := fmt.Sprintf("%s\x00%p\x00%s", b.Device, b.Value, b.Desc)
				if !seen[k] {
					seen[k] = true
					out = append(out, b)
				}
			}
		}
	}
	return out, nil
}

// OpenPlan opens a compiled plan file and prepares it for running: the
// graph, schedule and memory plan come from the file as they are (no pass
// runs again), the weights stay in the file mapping (pages are read as
// kernels touch them), and each partition is compiled on the device it
// names. Of opts only VerifyWeights applies: the compile options were fixed
// when the plan was written (Model.PlanMeta records them).
//
// A plan whose inputs have symbolic dimensions is shape-specialized at run
// time like a model compiled here (specialize.go), from its optimized
// graph, unless it spans several devices; compiling it for the shapes it
// will run (`weft compile --dim batch=1 --dim seq=128`, or weft.BindDims
// before weft.Compile) avoids compiling when it runs.
func OpenPlan(path string, opts Options) (*Model, error) {
	f, err := plan.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := newPlanModel(f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

func newPlanModel(f *plan.File, opts Options) (*Model, error) {
	if opts.VerifyWeights {
		if err := f.VerifyWeights(); err != nil {
			return nil, err
		}
	}
	devs, err := backends.AllDevices()
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	var names []string
	for _, d := range devs {
		have[d.Name()] = true
		names = append(names, d.Name())
	}
	for _, part := range f.Plan.Partitions {
		if !have[part.Device] {
			return nil, fmt.Errorf("weft: %s: partition %d runs on device %q, which this program does not have (devices: %s); recompile the model here",
				f.Path, part.Index, part.Device, strings.Join(names, ", "))
		}
	}
	// Devices that keep compiled code beside the plan (the Vulkan pipeline
	// cache) load it before the partitions compile and save it after; a
	// cache that does not fit is ignored (LoadCache says why), and one that
	// cannot be written is only a slower next open.
	var cachers []backends.CacheFiler
	for _, d := range devs {
		if c, ok := d.(backends.CacheFiler); ok && usesDevice(f.Plan, d.Name()) {
			c.LoadCache(f.Path)
			cachers = append(cachers, c)
		}
	}
	// Devices that stored prepacked constants in the plan get them back
	// for the compilation below (a blob that does not fit is packed again).
	var dones []func() string
	for _, d := range devs {
		if pp, ok := d.(backends.Prepacker); ok && usesDevice(f.Plan, d.Name()) {
			var mine []plan.Prepacked
			for _, b := range f.Prepacked {
				if b.Device == d.Name() {
					mine = append(mine, b)
				}
			}
			if len(mine) > 0 {
				dones = append(dones, pp.OfferPrepacked(f.Plan, mine))
			}
		}
	}
	s, err := runtime.NewSession(f.Plan, devs)
	for _, done := range dones {
		done()
	}
	if err != nil {
		return nil, fmt.Errorf("weft: %s: %w", f.Path, err)
	}
	for _, c := range cachers {
		_ = c.SaveCache(f.Path)
	}
	m := &Model{Graph: f.Plan.Graph, Plan: f.Plan, Session: s, PlanMeta: f.Meta, closer: f}
	if o, ok := planSpecializeOptions(f, opts); ok {
		m.spec = newSpecializer(f.Plan.Graph, o, m.OutputNames())
	}
	return m, nil
}

// planSpecializeOptions returns the options with which the variants of a
// plan whose inputs have symbolic dimensions are compiled from its
// (optimized) graph: the plan's -O level, no quantization (its weights are
// quantized already), the devices and threads of opts. ok is false when
// the plan is not specialized: static inputs, specialization turned off,
// or a multi-device plan (its graph holds Transfer nodes).
func planSpecializeOptions(f *plan.File, opts Options) (Options, bool) {
	g := f.Plan.Graph
	if opts.Variants < 0 || !hasUnknownInputDims(g) {
		return opts, false
	}
	for _, n := range g.Nodes {
		if n.Op == ir.OpTransfer {
			return opts, false
		}
	}
	o := Options{OptLevel: 2, Variants: opts.Variants, SpecializeLog: opts.SpecializeLog, Threads: opts.Threads,
		Target: opts.Target, Place: opts.Place, Pins: opts.Pins, Profile: opts.Profile}
	if first, _, _ := strings.Cut(f.Meta["options"], " "); len(first) == 3 && strings.HasPrefix(first, "-O") {
		if l := int(first[2] - '0'); l >= 0 && l <= passes.MaxLevel {
			o.OptLevel = l
		}
	}
	return o, true
}

// usesDevice reports whether a partition of p runs on device dev.
func usesDevice(p *plan.Plan, dev string) bool {
	for _, part := range p.Partitions {
		if part.Device == dev {
			return true
		}
	}
	return false
}
