package cpu

import (
	"context"
	"fmt"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"

	// The reference kernels, one package per op family.
	_ "github.com/weftrt/weft/backends/cpu/ref/control"
	_ "github.com/weftrt/weft/backends/cpu/ref/elementwise"
	_ "github.com/weftrt/weft/backends/cpu/ref/fused"
	_ "github.com/weftrt/weft/backends/cpu/ref/kvcache"
	_ "github.com/weftrt/weft/backends/cpu/ref/layout"
	_ "github.com/weftrt/weft/backends/cpu/ref/nn"
	_ "github.com/weftrt/weft/backends/cpu/ref/qmatmul"
	_ "github.com/weftrt/weft/backends/cpu/ref/recurrent"
	_ "github.com/weftrt/weft/backends/cpu/ref/reduce"
	_ "github.com/weftrt/weft/backends/cpu/ref/rope"
	_ "github.com/weftrt/weft/backends/cpu/ref/signal"
	_ "github.com/weftrt/weft/backends/cpu/ref/transfer"
	_ "github.com/weftrt/weft/backends/cpu/ref/vision"
)

// DeviceName is the name of the CPU device.
const DeviceName = "cpu"

func init() { backends.Register(backend{}) }

type backend struct{}

func (backend) Name() string { return "cpu" }

func (backend) Devices() ([]backends.Device, error) { return []backends.Device{device{}}, nil }

type device struct {
	threads int // workers of the fast kernels' pool (0: all cores; see poolFor)
}

func (device) Name() string        { return DeviceName }
func (device) Kind() backends.Kind { return backends.CPU }
func (device) HostVisible() bool   { return true }
func (device) Alloc(n int) (backends.Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cpu: negative allocation %d", n)
	}
	return hostBuffer(ir.AlignedBytes(n)), nil
}

func (device) Supports(n *ir.Node) error {
	if _, ok := ref.Lookup(n.Op); !ok {
		return fmt.Errorf("%w: cpu has no kernel for op %s", ir.ErrUnsupported, n.Op)
	}
	for _, sg := range n.Subgraphs() {
		for _, sn := range sg.Nodes {
			if err := (device{}).Supports(sn); err != nil {
				return fmt.Errorf("subgraph %q: node %v: %w", sg.Name, sn, err)
			}
		}
	}
	return nil
}

func (d device) Compile(p *plan.Partition) (backends.Executable, error) {
	for _, n := range p.Nodes {
		if err := d.Supports(n); err != nil {
			return nil, fmt.Errorf("cpu: node %v: %w", n, err)
		}
	}
	return executable{nodes: p.Nodes}, nil
}

type executable struct{ nodes []*ir.Node }

func (e executable) Run(ctx context.Context, env *backends.Env) error {
	if tr := backends.TracerFrom(ctx); tr != nil {
		return evalTraced(tr, &ref.Context{Ctx: ctx, Env: env}, e.nodes)
	}
	return ref.Eval(&ref.Context{Ctx: ctx, Env: env}, e.nodes)
}

type hostBuffer []byte

func (b hostBuffer) Size() int    { return len(b) }
func (b hostBuffer) Host() []byte { return b }
func (b hostBuffer) Free()        {}
