package scheduler_test

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	_ "github.com/weftrt/weft/backends/cpu" // every reference kernel, Transfer included
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/plan"
)

// residency records which device each tensor of a run lives on, so that
// fake devices can fail a node that reads another device's memory: the
// check that transfers were inserted where they are needed.
type residency struct {
	mu    sync.Mutex
	where map[*ir.Tensor]string
	host  map[string]bool // device -> host-visible
}

func newResidency() *residency {
	return &residency{where: map[*ir.Tensor]string{}, host: map[string]bool{}}
}

// fakeDev runs nodes with the reference kernels, supports the ops in its
// set (all ops when nil) and refuses to read memory it cannot see.
type fakeDev struct {
	name string
	kind backends.Kind
	vis  bool
	ops  map[string]bool
	res  *residency
}

func newFake(res *residency, name string, kind backends.Kind, hostVisible bool, ops ...string) *fakeDev {
	d := &fakeDev{name: name, kind: kind, vis: hostVisible, res: res}
	if ops != nil {
		d.ops = map[string]bool{ir.OpTransfer: true}
		for _, op := range ops {
			d.ops[op] = true
		}
	}
	res.host[name] = hostVisible
	return d
}

func (d *fakeDev) Name() string                       { return d.name }
func (d *fakeDev) Kind() backends.Kind                { return d.kind }
func (d *fakeDev) HostVisible() bool                  { return d.vis }
func (d *fakeDev) Alloc(int) (backends.Buffer, error) { return nil, fmt.Errorf("fake: no buffers") }
func (d *fakeDev) Compile(p *plan.Partition) (backends.Executable, error) {
	return fakeExe{d, p.Nodes}, nil
}
func (d *fakeDev) Supports(n *ir.Node) error {
	if d.ops == nil || d.ops[n.Op] {
		return nil
	}
	return fmt.Errorf("%w: %s lacks %s", ir.ErrUnsupported, d.name, n.Op)
}

type fakeExe struct {
	d     *fakeDev
	nodes []*ir.Node
}

func (e fakeExe) Run(ctx context.Context, env *backends.Env) error {
	res := e.d.res
	for _, n := range e.nodes {
		for _, v := range n.Inputs {
			if v == nil || v.IsConst() {
				continue
			}
			res.mu.Lock()
			w := res.where[env.Get(v)]
			res.mu.Unlock()
			ok := w == e.d.name || (e.d.vis && (w == "" || res.host[w]))
			if n.Op == ir.OpTransfer {
				ok = true // the one node that reads across the boundary
			}
			if !ok {
				return fmt.Errorf("fake %s: node %v reads %s, which lives on %q", e.d.name, n, v, w)
			}
		}
		if err := ref.RunNode(&ref.Context{Ctx: ctx, Env: env}, n); err != nil {
			return err
		}
		dst := e.d.name
		if n.Op == ir.OpTransfer {
			dst = n.Attrs["to"].Str
		}
		res.mu.Lock()
		for _, o := range n.Outputs {
			res.where[env.Get(o)] = dst
		}
		res.mu.Unlock()
	}
	return nil
}

// mlp builds x[M,K] → MatMul W1 → Relu → MatMul W2 → Add b → Erf → Mul
// (a small MLP with node names /layers.N/...), shapes inferred.
func mlp(t *testing.T, m, k, n int64) *ir.Graph {
	t.Helper()
	rng := rand.New(rand.NewSource(1))
	w := func(shape ...int64) *ir.Tensor {
		t := ir.NewTensor(ir.Float32, shape)
		for i := range t.Len() {
			t.SetFloat64(i, rng.Float64()-0.5)
		}
		return t
	}
	b := ir.NewBuilder("mlp")
	x := b.Input("x", ir.Float32, ir.S(m, k))
	h := b.Op("MatMul", x, b.Const("w1", w(k, n)))
	h = b.Op("Relu", h)
	h = b.Op("MatMul", h, b.Const("w2", w(n, n)))
	h = b.Op("Add", h, b.Const("b2", w(n)))
	e := b.Op("Erf", h)
	y := b.Op("Mul", e, h)
	b.Output("y", y)
	b.Output("h", h)
	g, err := b.Build()
	require.NoError(t, err)
	names := []string{"/layers.0/MatMul", "/layers.0/Relu", "/layers.1/MatMul", "/layers.1/Add", "/head/Erf", "/head/Mul"}
	for i, nd := range g.Nodes {
		nd.Name = names[i]
	}
	require.NoError(t, passes.InferShapes(g))
	return g
}
