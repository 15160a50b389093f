package ref

import (
	"context"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
)

// Kernel computes a node's outputs from its input tensors (nil for absent
// optional inputs). It returns exactly len(n.Outputs) freshly allocated
// tensors, must not modify its inputs (they may be memory-mapped
// constants), and reports bad input as an error, never a panic. Unsupported
// attribute values or dtypes return an error wrapping ir.ErrUnsupported
// (see Unsupported).
type Kernel func(ctx *Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error)

// Context gives a kernel what it needs beyond its inputs: the Env of the
// running graph (control-flow kernels run subgraphs in a child Env).
type Context struct {
	Ctx context.Context
	Env *backends.Env
}

var (
	mu      sync.RWMutex
	kernels = map[string]Kernel{}
)

// Register adds the kernel for a core op; it panics on a duplicate.
func Register(op string, k Kernel) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := kernels[op]; dup {
		panic("ref: duplicate kernel for " + op)
	}
	kernels[op] = k
}

// Lookup returns the kernel for op.
func Lookup(op string) (Kernel, bool) {
	mu.RLock()
	defer mu.RUnlock()
	k, ok := kernels[op]
	return k, ok
}

// Ops lists the ops that have a kernel, sorted.
func Ops() []string {
	mu.RLock()
	defer mu.RUnlock()
	ops := make([]string, 0, len(kernels))
	for op := range kernels {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

// Unsupported returns an error wrapping ir.ErrUnsupported.
func Unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ir.ErrUnsupported, fmt.Sprintf(format, args...))
}

// Errorf returns a plain error (bad input, shape mismatch).
func Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// RunNode runs one node: it gathers the inputs from ctx.Env, calls the
// kernel, checks and stores the outputs. A panicking kernel becomes an error
// naming the node.
func RunNode(ctx *Context, n *ir.Node) (err error) {
	k, ok := Lookup(n.Op)
	if !ok {
		return fmt.Errorf("node %v: %w: no reference kernel for op %s", n, ir.ErrUnsupported, n.Op)
	}
	in := make([]*ir.Tensor, len(n.Inputs))
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		if in[i] = ctx.Env.Get(v); in[i] == nil {
			return fmt.Errorf("node %v: input %d (%v) has no value", n, i, v)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("node %v: kernel panicked: %v\n%s", n, r, debug.Stack())
		}
	}()
	out, err := k(ctx, n, in)
	if err != nil {
		return fmt.Errorf("node %v: %w", n, err)
	}
	if len(out) != len(n.Outputs) {
		return fmt.Errorf("node %v: kernel returned %d outputs, want %d", n, len(out), len(n.Outputs))
	}
	for i, t := range out {
		if t == nil {
			return fmt.Errorf("node %v: kernel returned no tensor for output %d", n, i)
		}
		if err := t.Check(); err != nil {
			return fmt.Errorf("node %v: output %d: %w", n, i, err)
		}
		ctx.Env.Set(n.Outputs[i], t)
	}
	return nil
}

// Eval runs nodes in order in ctx.Env (whose parents provide graph inputs,
// constants and outer-scope values).
func Eval(ctx *Context, nodes []*ir.Node) error {
	for _, n := range nodes {
		if ctx.Ctx != nil {
			if err := ctx.Ctx.Err(); err != nil {
				return err
			}
		}
		if err := RunNode(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// RunGraph runs a (sub)graph: it binds g's constants and inputs in a child
// of parent, evaluates the nodes and returns the outputs in order.
func RunGraph(ctx context.Context, g *ir.Graph, parent *backends.Env, inputs []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("graph %q: got %d inputs, want %d", g.Name, len(inputs), len(g.Inputs))
	}
	env := backends.NewEnv(parent)
	for _, c := range g.Consts {
		env.Set(c, c.Const)
	}
	for i, v := range g.Inputs {
		env.Set(v, inputs[i])
	}
	if err := Eval(&Context{Ctx: ctx, Env: env}, g.Nodes); err != nil {
		return nil, fmt.Errorf("graph %q: %w", g.Name, err)
	}
	out := make([]*ir.Tensor, len(g.Outputs))
	for i, v := range g.Outputs {
		if out[i] = env.Get(v); out[i] == nil {
			return nil, fmt.Errorf("graph %q: output %d (%v) was not computed", g.Name, i, v)
		}
	}
	return out, nil
}
