package toyaccel

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// DeviceName is the name of the toy device.
const DeviceName = "toy:0"

func init() { backends.Register(backend{}) }

// backend is the "toy" backend: one device.
type backend struct{}

func (backend) Name() string { return "toy" }

func (backend) Devices() ([]backends.Device, error) { return []backends.Device{device{}}, nil }

// device is the toy accelerator. Its buffers are host memory, so values
// move between it and the CPU without Transfer nodes.
type device struct{}

func (device) Name() string        { return DeviceName }
func (device) Kind() backends.Kind { return backends.GPU }
func (device) HostVisible() bool   { return true }

// ops are the toy's kernels: f(a, b) per element (b unused by Relu).
var ops = map[string]func(a, b float32) float32{
	"Relu": func(a, _ float32) float32 { return max(a, 0) },
	"Add":  func(a, b float32) float32 { return a + b },
	"Mul":  func(a, b float32) float32 { return a * b },
}

// Supports accepts Relu, Add and Mul on float32 values of static shapes;
// Add and Mul need two inputs of one shape (the toy does not broadcast).
// Every refusal wraps ir.ErrUnsupported and says why, which is what `weft
// plan` prints as the node's placement cause.
func (device) Supports(n *ir.Node) error {
	if _, ok := ops[n.Op]; !ok {
		return fmt.Errorf("%w: toy has no %s kernel (it runs Relu, Add, Mul)", ir.ErrUnsupported, n.Op)
	}
	want := 2
	if n.Op == "Relu" {
		want = 1
	}
	if len(n.Inputs) != want || len(n.Outputs) != 1 {
		return fmt.Errorf("%w: toy: %s with %d inputs and %d outputs", ir.ErrUnsupported, n.Op, len(n.Inputs), len(n.Outputs))
	}
	for _, v := range append(append([]*ir.Value{}, n.Inputs...), n.Outputs...) {
		if v == nil || v.DType != ir.Float32 {
			return fmt.Errorf("%w: toy computes in f32 only, %v is not", ir.ErrUnsupported, v)
		}
		if !v.Shape.Static() {
			return fmt.Errorf("%w: toy needs static shapes, %v has [%v]", ir.ErrUnsupported, v, v.Shape)
		}
	}
	if want == 2 && !slices.Equal(n.Inputs[0].Shape.Ints(), n.Inputs[1].Shape.Ints()) {
		return fmt.Errorf("%w: toy does not broadcast: %s of [%v] and [%v]", ir.ErrUnsupported, n.Op, n.Inputs[0].Shape, n.Inputs[1].Shape)
	}
	return nil
}

// Alloc returns host memory, aligned for any element type.
func (device) Alloc(n int) (backends.Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("toy: negative allocation %d", n)
	}
	return hostBuffer(ir.AlignedBytes(n)), nil
}

// Compile checks every node once, so that Run cannot meet one it refuses.
func (d device) Compile(p *plan.Partition) (backends.Executable, error) {
	for _, n := range p.Nodes {
		if err := d.Supports(n); err != nil {
			return nil, fmt.Errorf("toy: partition %d: node %v: %w", p.Index, n, err)
		}
	}
	return executable{nodes: p.Nodes}, nil
}

// executable runs a partition's nodes in order. It keeps no state, so
// concurrent runs (each with its own Env) are safe.
type executable struct{ nodes []*ir.Node }

// Run reads each node's inputs from env, computes, and binds the output.
// When the run's context carries a tracer it reports one span per node.
func (e executable) Run(ctx context.Context, env *backends.Env) error {
	tr := backends.TracerFrom(ctx)
	for _, n := range e.nodes {
		if ctx != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		var t0 time.Time
		if tr != nil {
			t0 = time.Now()
		}
		if err := run(n, env); err != nil {
			return fmt.Errorf("toy: node %v: %w", n, err)
		}
		if tr != nil {
			tr.Span(backends.NodeSpan(DeviceName, n, t0, time.Now()))
		}
	}
	return nil
}

func run(n *ir.Node, env *backends.Env) error {
	f := ops[n.Op]
	a := env.Get(n.Inputs[0])
	if a == nil {
		return fmt.Errorf("input 0 (%v) has no value", n.Inputs[0])
	}
	b := a
	if len(n.Inputs) == 2 {
		if b = env.Get(n.Inputs[1]); b == nil {
			return fmt.Errorf("input 1 (%v) has no value", n.Inputs[1])
		}
	}
	// Shapes were checked at compile time against the declared ones; the
	// tensors of a run must still agree (a caller may bind anything).
	if a.DType != ir.Float32 || b.DType != ir.Float32 || !slices.Equal(a.Shape, b.Shape) {
		return fmt.Errorf("got %v and %v, want f32 tensors of one shape", a, b)
	}
	out := ir.NewTensor(ir.Float32, a.Shape)
	av, bv, ov := a.Float32s(), b.Float32s(), out.Float32s()
	for i := range ov {
		ov[i] = f(av[i], bv[i])
	}
	env.Set(n.Outputs[0], out)
	return nil
}

// hostBuffer is a device buffer in host memory.
type hostBuffer []byte

func (b hostBuffer) Size() int    { return len(b) }
func (b hostBuffer) Host() []byte { return b }
func (b hostBuffer) Free()        {}
