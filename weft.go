package weft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu" // the default backend
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/frontend/onnx"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/plan"
	"github.com/weftrt/weft/runtime"
	"github.com/weftrt/weft/scheduler"
)

// Options configures compilation.
type Options struct {
	// OptLevel selects the pass pipeline: 0, 1 or 2.
	OptLevel int
	// Verify runs the IR verifier between passes.
	Verify bool
	// PrintAfter names a pass whose output IR is written to PrintOut.
	PrintAfter string
	PrintOut   io.Writer
	// Pins maps node names or op types to device names.
	Pins map[string]string
	// Place holds placement rules (OP=DEVICE, name:GLOB=DEVICE, *=DEVICE;
	// later rules win; see scheduler.Rule).
	Place []string
	// Profile names a bundled device profile or a profile file for the
	// scheduler's cost model ("" = generic numbers; see docs/profiles.md).
	Profile string
	// Target restricts compilation to the devices it names: device names
	// ("vulkan:0"), backend names that prefix them ("vulkan") or kinds
	// ("cpu", "gpu"). Empty: every device of every registered backend.
	Target []string
	// Quantize selects weight quantization (see passes.QuantizeOptions).
	Quantize passes.QuantizeOptions
	// Prepare, when set, is called by Open on the imported graph before any
	// pass runs (to bind symbolic dims, override declared input shapes, ...).
	Prepare func(g *ir.Graph) error
	// Threads is the number of worker threads of the CPU backend's fast
	// kernels (0: GOMAXPROCS). Sessions with the same count share one
	// persistent pool.
	Threads int
	// VerifyWeights makes Open of a .wplan file check the weights section's
	// checksum, which reads every weight page (see plan.File.VerifyWeights).
	VerifyWeights bool
	// Variants is the number of shape-specialized variants a Model whose
	// inputs have symbolic dimensions keeps, least recently used evicted
	// first (see specialize.go): 0 means DefaultVariants (8), a negative
	// number turns specialization off (the generic plan always runs).
	Variants int
	// SpecializeLog, when set, gets one line per variant compiled or
	// failed (a failure runs the generic plan instead, and says why here).
	SpecializeLog io.Writer
}

// DefaultOptions returns the options the CLI uses by default (-O2).
func DefaultOptions() Options { return Options{OptLevel: 2} }

// Load imports a model file without optimizing it. The closer releases the
// file mapping that constant tensors point into; call it after the graph is
// no longer used.
func Load(path string) (*ir.Graph, io.Closer, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".onnx":
		m, err := onnx.Load(path)
		if err != nil {
			return nil, nil, err
		}
		return m.Graph, m, nil
	case PlanExt: // the compiled graph of a plan (see OpenPlan)
		f, err := plan.Open(path)
		if err != nil {
			return nil, nil, err
		}
		return f.Plan.Graph, f, nil
	}
	return nil, nil, fmt.Errorf("weft: %s: %w file type (want .onnx or %s)", path, ir.ErrUnsupported, PlanExt)
}

// Compile runs the pass pipeline on g (in place) and schedules it onto the
// registered devices.
func Compile(g *ir.Graph, opts Options) (*plan.Plan, *passes.Report, error) {
	rep, err := Optimize(g, opts)
	if err != nil {
		return nil, nil, err
	}
	devs, err := Devices(opts)
	if err != nil {
		return nil, nil, err
	}
	sopts, err := SchedulerOptions(devs, opts)
	if err != nil {
		return nil, nil, err
	}
	p, err := scheduler.Schedule(g, sopts)
	if err != nil {
		return nil, nil, err
	}
	return p, rep, nil
}

// Optimize runs the pass pipeline of opts on g (in place), without
// scheduling: the first half of Compile.
func Optimize(g *ir.Graph, opts Options) (*passes.Report, error) {
	return passes.Run(g, passes.Options{
		Level: opts.OptLevel, Verify: opts.Verify, PrintAfter: opts.PrintAfter, Out: opts.PrintOut,
		Eval: evalNode, Quantize: opts.Quantize,
	})
}

// SchedulerOptions turns the placement options (Pins, Place, Profile)
// into scheduler options for devs.
func SchedulerOptions(devs []backends.Device, opts Options) (scheduler.Options, error) {
	so := scheduler.Options{Devices: devs, Pins: opts.Pins}
	rules, err := scheduler.ParseRules(opts.Place)
	if err != nil {
		return so, fmt.Errorf("weft: %w", err)
	}
	so.Rules = rules
	if opts.Profile != "" {
		if so.Profile, err = scheduler.LoadProfile(opts.Profile); err != nil {
			return so, fmt.Errorf("weft: %w", err)
		}
	}
	return so, nil
}

// Devices returns the registered devices opts.Target selects, in
// registry order; a target that names no device is an error.
func Devices(opts Options) ([]backends.Device, error) {
	if len(opts.Target) > 0 && !slices.ContainsFunc(opts.Target, func(t string) bool { return t != cpu.DeviceName }) {
		// CPU only: do not probe the other backends (a Vulkan probe loads
		// the drivers, tens of MB of resident memory).
		if opts.Threads > 0 {
			return []backends.Device{cpu.NewDevice(opts.Threads)}, nil
		}
		b, _ := backends.Get(cpu.DeviceName)
		return b.Devices()
	}
	all, err := backends.AllDevices()
	for i, d := range all {
		if opts.Threads > 0 && d.Name() == cpu.DeviceName {
			all[i] = cpu.NewDevice(opts.Threads)
		}
	}
	if err != nil || len(opts.Target) == 0 {
		return all, err
	}
	var out []backends.Device
	picked := map[string]bool{}
	for _, t := range opts.Target {
		found := false
		for _, d := range all {
			if d.Name() == t || strings.HasPrefix(d.Name(), t+":") {
				found, picked[d.Name()] = true, true
			}
		}
		for _, d := range all {
			// A kind only when no device or backend has that name ("cpu" is
			// the CPU backend, not every device of kind CPU).
			if !found && d.Kind().String() == t {
				picked[d.Name()] = true
			}
		}
		if !found && !kindMatched(all, t) {
			names := make([]string, len(all))
			for i, d := range all {
				names[i] = d.Name()
			}
			return nil, fmt.Errorf("weft: target %q: no such device (have: %s)", t, strings.Join(names, ", "))
		}
	}
	for _, d := range all {
		if picked[d.Name()] {
			out = append(out, d)
		}
	}
	return out, nil
}

func kindMatched(devs []backends.Device, kind string) bool {
	for _, d := range devs {
		if d.Kind().String() == kind {
			return true
		}
	}
	return false
}

// evalNode runs one node on constant inputs with the CPU reference kernels
// (the constant-folding evaluator handed to the passes).
func evalNode(n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	env := backends.NewEnv(nil)
	for i, v := range n.Inputs {
		if v != nil && i < len(in) {
			env.Set(v, in[i])
		}
	}
	if err := ref.RunNode(&ref.Context{Ctx: context.Background(), Env: env}, n); err != nil {
		return nil, err
	}
	out := make([]*ir.Tensor, len(n.Outputs))
	for i, o := range n.Outputs {
		out[i] = env.Get(o)
	}
	return out, nil
}

// Model is a compiled, runnable model. When its inputs have symbolic
// dimensions, Graph, Plan, Report and Session are the generic compilation
// (symbolic shapes, the fallback); runs use variants specialized for the
// inputs' shapes (specialize.go, Options.Variants).
type Model struct {
	Graph   *ir.Graph
	Plan    *plan.Plan
	Report  *passes.Report
	Session *runtime.Session
	// PlanMeta is the metadata of the plan file the model was opened from
	// (nil for a model compiled here).
	PlanMeta map[string]string
	closer   io.Closer
	// spec compiles and caches shape-specialized variants when the
	// graph's inputs have symbolic dimensions (nil otherwise).
	spec *specializer
}

// Open loads, compiles and prepares a model file for running. A compiled
// plan (.wplan) is opened with OpenPlan instead: it is not compiled again.
func Open(path string, opts Options) (*Model, error) {
	if IsPlanFile(path) {
		return OpenPlan(path, opts)
	}
	g, closer, err := Load(path)
	if err != nil {
		return nil, err
	}
	if opts.Prepare != nil {
		if err := opts.Prepare(g); err != nil {
			closer.Close()
			return nil, fmt.Errorf("weft: %s: %w", path, err)
		}
	}
	m, err := New(g, opts)
	if err != nil {
		closer.Close()
		return nil, fmt.Errorf("weft: %s: %w", path, err)
	}
	m.closer = closer
	return m, nil
}

// New compiles an in-memory graph (for example one written with ir.Builder).
// When g's inputs have symbolic dimensions, New keeps a copy of g as it is
// now, from which runs compile shape-specialized variants (specialize.go).
func New(g *ir.Graph, opts Options) (*Model, error) {
	var tmpl *ir.Graph
	if opts.Variants >= 0 && hasUnknownInputDims(g) {
		alignConsts(g) // shared by the generic plan and every variant
		tmpl = cloneGraph(g)
	}
	p, rep, err := Compile(g, opts)
	if err != nil {
		return nil, err
	}
	devs, err := Devices(opts)
	if err != nil {
		return nil, err
	}
	s, err := runtime.NewSession(p, devs)
	if err != nil {
		return nil, err
	}
	m := &Model{Graph: g, Plan: p, Report: rep, Session: s}
	if tmpl != nil && sameInputs(m.Inputs(), tmpl.Inputs) == nil {
		m.spec = newSpecializer(tmpl, opts, m.OutputNames())
	}
	return m, nil
}

// Run executes the model. Inputs and outputs are keyed by value name (see
// runtime.OutputNames for unnamed outputs). Safe for concurrent use. A
// model with symbolic input dimensions runs the variant specialized for
// the inputs' shapes (compiled on first use; see specialize.go).
func (m *Model) Run(ctx context.Context, inputs map[string]*ir.Tensor) (map[string]*ir.Tensor, error) {
	if m.spec != nil {
		if out, ok, err := m.spec.run(ctx, inputs); ok || err != nil {
			return out, err
		}
	}
	return m.Session.Run(ctx, inputs)
}

// RunInto executes the model writing into caller-owned output tensors (in
// the order of Outputs); after its first call it allocates nothing for
// plans whose nodes all have planned kernels (see runtime.Session.RunInto).
//
// A model with symbolic input dimensions runs the variant specialized for
// the inputs' shapes; once it is compiled, finding it allocates nothing.
func (m *Model) RunInto(ctx context.Context, inputs, outputs []*ir.Tensor) error {
	if m.spec != nil {
		if ok, err := m.spec.runInto(ctx, inputs, outputs); ok || err != nil {
			return err
		}
	}
	return m.Session.RunInto(ctx, inputs, outputs)
}

// Inputs returns the model's inputs in order (with their symbolic
// dimensions, when they have any).
func (m *Model) Inputs() []*ir.Value { return m.Session.Inputs() }

// Outputs returns the model's outputs in order.
func (m *Model) Outputs() []*ir.Value { return m.Session.Outputs() }

// OutputNames returns the keys Run uses for the outputs, in order.
func (m *Model) OutputNames() []string { return runtime.OutputNames(m.Graph) }

// Close releases the session's device resources (runtime.Session.Close)
// and the model file.
func (m *Model) Close() error {
	var err error
	if m.spec != nil {
		err = m.spec.close()
	}
	if m.Session != nil {
		err = errors.Join(err, m.Session.Close())
	}
	if m.closer != nil {
		err = errors.Join(err, m.closer.Close())
	}
	return err
}
