package passes

import (
	"slices"

	"github.com/weftrt/weft/ir"
)

// chainOps are the elementwise and broadcasting ops an elementwise chain
// may hold: one output, computed element by element from (broadcast) inputs.
var chainOps = map[string]bool{}

func init() {
	for _, op := range []string{
		// unary math
		"Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
		"Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf", "Floor", "Ceil", "Round", "Sign", "Not",
		"IsNaN", "IsInf", "Cast",
		// activations
		"Tanh", "Sigmoid", "Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Gelu", "SiLU", "Softplus",
		"Softsign", "HardSigmoid", "HardSwish", "Mish", "ThresholdedRelu", "PRelu", "Clip",
		// binary arithmetic and logic
		"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "And", "Or", "Xor",
		"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
		// comparisons and selection
		"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Where",
	} {
		chainOps[op] = true
	}
}

// maxInlineConst is the largest constant (in bytes) a Fused body copies
// instead of taking it as an input.
const maxInlineConst = 64

// chainable reports whether n may join an elementwise chain: an op of
// chainOps with one typed output and typed inputs. Scalars and integer
// vectors stay out: they are shape arithmetic, which gains nothing from a
// kernel and which shape inference and folding must keep seeing.
func (r *rewriter) chainable(n *ir.Node) bool {
	if n == nil || !chainOps[n.Op] || len(n.Outputs) != 1 || !r.live(n) || len(n.Subgraphs()) > 0 {
		return false
	}
	if o := n.Outputs[0]; len(o.Shape) == 0 || len(o.Shape) == 1 && !o.DType.IsFloat() {
		return false
	}
	for _, v := range append(n.Inputs, n.Outputs[0]) {
		if v != nil && (!v.DType.Valid() || v.Shape == nil) {
			return false
		}
	}
	return true
}

// fuseChain replaces the elementwise chain rooted at n by one Fused node.
// The chain is the tree of chainable nodes whose output is read only by
// another node of the tree; n is its root when its own output does not
// continue into a chainable node. The body gets fresh, unnamed inputs (the
// chain's external inputs in first-use order; constants of at most
// maxInlineConst bytes are copied in as body constants instead), copies of
// the chain's nodes, and the root's value as its output.
func (r *rewriter) fuseChain(n *ir.Node) bool {
	if !r.chainable(n) || r.chainable(r.soleReader(n.Outputs[0])) {
		return false
	}
	members := []*ir.Node{n}
	for i := 0; i < len(members); i++ {
		m := members[i]
		for j, v := range m.Inputs {
			if v == nil || slices.Contains(m.Inputs[:j], v) {
				continue
			}
			if p := v.Producer; r.chainable(p) && r.soleReader(v) == m {
				members = append(members, p)
			}
		}
	}
	if len(members) < 2 {
		return false
	}
	slices.SortFunc(members, func(a, b *ir.Node) int { return r.pos[a] - r.pos[b] })
	root := n.Outputs[0]
	name := n.Name
	if name == "" {
		name = "fused_" + n.Op
	}
	body := r.g.NewSubgraph(name)
	inner := map[*ir.Value]*ir.Value{}
	var inputs []*ir.Value
	for _, m := range members {
		c := &ir.Node{Name: m.Name, Op: m.Op, Attrs: ir.Attrs{}}
		for k, a := range m.Attrs {
			c.Attrs[k] = a
		}
		for _, v := range m.Inputs {
			if v == nil {
				c.Inputs = append(c.Inputs, nil)
				continue
			}
			b, ok := inner[v]
			if !ok {
				if v.IsConst() && len(v.Const.Data) <= maxInlineConst {
					b = body.AddConst("", v.Const)
				} else {
					b = body.AddInput("", v.DType, v.Shape.Clone())
					inputs = append(inputs, v)
				}
				inner[v] = b
			}
			c.Inputs = append(c.Inputs, b)
		}
		o := m.Outputs[0]
		bo := body.NewValue("", o.DType, o.Shape.Clone())
		bo.Producer = c
		c.Outputs = []*ir.Value{bo}
		inner[o] = bo
		body.Nodes = append(body.Nodes, c)
	}
	body.Outputs = []*ir.Value{inner[root]}
	attrs := ir.Attrs{"body": {Kind: ir.AttrGraph, Graph: body}}
	return r.replace(members, root, 1, r.node("Fused", n.Name, attrs, root, 0, nil, inputs...))
}
