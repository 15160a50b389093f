package passes

import (
	"fmt"
	"sort"

	"github.com/weftrt/weft/ir"
)

// typ is the inferred type of one output: a dtype (Invalid: unknown) and a
// shape (nil: unknown rank; dims with Size -1: unknown, maybe symbolic).
type typ struct {
	dt ir.DType
	sh ir.Shape
}

// inferFn infers the output types of n from its inputs, attributes and the
// known values of small integer inputs. It may return fewer types than n has
// outputs: the rest stay unknown. An error means the node is inconsistent
// (not merely that inference is impossible).
type inferFn func(s *state, n *ir.Node) ([]typ, error)

var inferers = map[string]inferFn{}

// register installs fn for each op (called from init functions).
func register(fn inferFn, ops ...string) {
	for _, op := range ops {
		if _, dup := inferers[op]; dup {
			panic("passes: duplicate shape inference for " + op)
		}
		inferers[op] = fn
	}
}

// InferredOps returns the ops shape inference knows, sorted.
func InferredOps() []string {
	ops := make([]string, 0, len(inferers))
	for op := range inferers {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

// InferShapes fills in the dtype and shape of every node output of g and its
// subgraphs that can be derived from the graph inputs, the constants and the
// attributes. Outputs of ops it does not know keep their declared (or
// unknown) type. A declared type that contradicts the inferred one, or an
// inconsistent node (mismatched broadcast, matmul inner dims, ...), is an
// error naming the node. It does not change the graph structure.
func InferShapes(g *ir.Graph) error {
	if _, err := newState().run(g); err != nil {
		return fmt.Errorf("passes: infer: %w", err)
	}
	return nil
}

func inferPass(g *ir.Graph, _ *Context) (Change, error) {
	n, err := newState().run(g)
	return Change{Typed: n}, err
}

// state is one run of shape inference.
type state struct {
	// vals holds the known element values of small tensors (shape
	// arithmetic); see infer_values.go.
	vals  map[*ir.Value][]elem
	typed int // values whose type became more precise
}

func newState() *state { return &state{vals: map[*ir.Value][]elem{}} }

func (s *state) run(g *ir.Graph) (int, error) {
	err := s.graph(g)
	return s.typed, err
}

// graph infers the nodes of g in order (their inputs are already typed,
// subgraph inputs bound by the caller).
func (s *state) graph(g *ir.Graph) error {
	for _, n := range g.Nodes {
		if err := s.node(n); err != nil {
			return fmt.Errorf("graph %q: node %v: %w", g.Name, n, err)
		}
	}
	return nil
}

func (s *state) node(n *ir.Node) error {
	fn := inferers[n.Op]
	var out []typ
	if fn != nil {
		var err error
		if out, err = fn(s, n); err != nil {
			return err
		}
	} else {
		// Unknown op: its outputs stay unknown, but constant-only parts of
		// its subgraphs can still be typed.
		for _, sg := range n.Subgraphs() {
			if err := s.graph(sg); err != nil {
				return err
			}
		}
	}
	for i, o := range n.Outputs {
		var t typ
		if i < len(out) {
			t = out[i]
		}
		if err := s.set(o, t); err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
	}
	s.fold(n)
	return nil
}

// set merges the inferred type t into v's declared type.
func (s *state) set(v *ir.Value, t typ) error {
	dt := v.DType
	if t.dt.Valid() {
		if dt.Valid() && dt != t.dt {
			return fmt.Errorf("inferred dtype %v, declared %v", t.dt, dt)
		}
		dt = t.dt
	}
	sh, err := mergeDeclared(v.Shape, t.sh)
	if err != nil {
		return err
	}
	if dt != v.DType || !sh.Equal(v.Shape) {
		s.typed++
	}
	v.DType, v.Shape = dt, sh
	return nil
}

// mergeDeclared combines a declared and an inferred shape: a known size wins,
// a symbol from inference beats a declared one (it is tied to the inputs),
// and known sizes that differ are an error.
func mergeDeclared(decl, inf ir.Shape) (ir.Shape, error) {
	if inf == nil {
		return decl, nil
	}
	if decl == nil {
		return inf.Clone(), nil
	}
	if len(decl) != len(inf) {
		return nil, fmt.Errorf("inferred shape [%v], declared [%v]", inf, decl)
	}
	out := make(ir.Shape, len(inf))
	for i := range inf {
		d, f := decl[i], inf[i]
		switch {
		case d.Known() && f.Known() && d.Size != f.Size:
			return nil, fmt.Errorf("inferred shape [%v], declared [%v]", inf, decl)
		case d.Known():
			out[i] = d
		case f.Known() || f.Sym != "":
			out[i] = f
		default:
			out[i] = d
		}
	}
	return out, nil
}

// in returns the type of input i (unknown when absent).
func in(n *ir.Node, i int) typ {
	v := n.In(i)
	if v == nil {
		return typ{}
	}
	return typ{v.DType, v.Shape}
}

// same returns input 0's type for every output: the elementwise rule.
func same(_ *state, n *ir.Node) ([]typ, error) {
	return []typ{in(n, 0)}, nil
}

// withShape returns t with its shape replaced.
func (t typ) withShape(sh ir.Shape) typ { return typ{t.dt, sh} }

// rank returns the rank of t's shape, or -1.
func (t typ) rank() int {
	if t.sh == nil {
		return -1
	}
	return len(t.sh)
}
