package passes

import "github.com/weftrt/weft/ir"

// Fuse runs the fuse pass on g alone (after InferShapes).
func Fuse(g *ir.Graph) (Change, error) { return fusePass(g, NewContext(g)) }

// fusePass merges nodes that run better as one kernel:
//
//	MatMul [+ bias] [act]   -> FusedMatMul(A, B, bias?)   bias: [..., N] or [..., 1], leading dims 1
//	Conv [+ Z] [act]        -> FusedConv(X, W, B?, Z?)    Z: a residual of Conv's output shape
//	chains of elementwise ops, each intermediate read once -> Fused(inputs...; body)
//
// act is one of Relu, LeakyRelu, Sigmoid, Tanh, Gelu, SiLU and Clip with
// constant (or absent) bounds. MatMul and Conv fusion runs first, so the
// Add and activation after a MatMul go to the FusedMatMul rather than to an
// elementwise chain. Only float MatMul and Conv are fused. As in patterns,
// the fused node takes over the output value of the last node of its group,
// every intermediate must be read by the group alone, and the change counts
// the nodes that disappeared into fused ones as Fused.
func fusePass(g *ir.Graph, _ *Context) (Change, error) {
	r := newRewriter(g)
	r.run(func(n *ir.Node) bool {
		switch n.Op {
		case "MatMul":
			return r.fuseMatMul(n)
		case "Conv":
			return r.fuseConv(n)
		}
		return false
	})
	r.run(r.fuseChain)
	return r.ch, nil
}

// act is a fusable activation.
type act struct {
	node        *ir.Node
	name        string   // the activation attribute
	alpha, beta *float32 // activation_alpha and activation_beta, when set
}

// activation returns the activation that is the sole reader of y, if any.
func (r *rewriter) activation(y *ir.Value) (act, bool) {
	n := r.soleReader(y)
	if n == nil || n.In(0) != y || len(n.Outputs) != 1 || !sameType(n.Outputs[0], y) {
		return act{}, false
	}
	a := act{node: n, name: n.Op}
	switch n.Op {
	case "Relu", "Sigmoid", "Tanh", "SiLU":
		if len(n.Inputs) != 1 {
			return act{}, false
		}
	case "LeakyRelu":
		alpha := n.AttrFloat("alpha", 0.01)
		a.alpha = &alpha
	case "Gelu":
		switch n.AttrString("approximate", "none") {
		case "none":
		case "tanh":
			a.name = "GeluTanh"
		default:
			return act{}, false
		}
	case "Clip":
		// absent bounds stay absent attributes: unbounded.
		for i, p := range []**float32{&a.alpha, &a.beta} {
			v := n.In(1 + i)
			if v == nil {
				continue
			}
			c, ok := scalarOf(v)
			if !ok {
				return act{}, false
			}
			f := float32(c)
			*p = &f
		}
	default:
		return act{}, false
	}
	return a, true
}

// set writes the activation attributes into attrs.
func (a act) set(attrs ir.Attrs) {
	attrs["activation"] = &ir.Attr{Kind: ir.AttrString, Str: a.name}
	if a.alpha != nil {
		attrs["activation_alpha"] = &ir.Attr{Kind: ir.AttrFloat, Float: *a.alpha}
	}
	if a.beta != nil {
		attrs["activation_beta"] = &ir.Attr{Kind: ir.AttrFloat, Float: *a.beta}
	}
}

// isBias reports whether b, added to y, broadcasts along y's last dim only.
func isBias(b, y *ir.Value) bool {
	if b == nil || b.DType != y.DType || b.Shape == nil || y.Shape == nil || len(b.Shape) == 0 || len(b.Shape) > len(y.Shape) {
		return false
	}
	last := len(b.Shape) - 1
	for i, d := range b.Shape {
		one := d.Known() && d.Size == 1
		if i < last && !one || i == last && !one && !sameDim(d, y.Shape[len(y.Shape)-1]) {
			return false
		}
	}
	return true
}

// fuseMatMul fuses a float MatMul with the bias Add and the activation that
// follow it.
func (r *rewriter) fuseMatMul(n *ir.Node) bool {
	y := n.Outputs[0]
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 || !floatTyped(y) || len(y.Shape) == 0 {
		return false
	}
	group, out := []*ir.Node{n}, y
	inputs := []*ir.Value{n.Inputs[0], n.Inputs[1]}
	if add := r.soleReader(y); add != nil && add.Op == "Add" && len(add.Outputs) == 1 {
		if b := other(add, y); b != y && isBias(b, y) && sameType(add.Outputs[0], y) {
			group, out = append(group, add), add.Outputs[0]
			inputs = append(inputs, b)
		}
	}
	attrs := ir.Attrs{}
	if a, ok := r.activation(out); ok {
		a.set(attrs)
		group, out = append(group, a.node), a.node.Outputs[0]
	}
	if len(group) == 1 {
		return false
	}
	return r.replace(group, out, 1, r.node("FusedMatMul", nameOf(n), attrs, out, 0, nil, inputs...))
}

// fuseConv fuses a float Conv with a residual Add and the activation that
// follow it.
func (r *rewriter) fuseConv(n *ir.Node) bool {
	y := n.Outputs[0]
	if len(n.Inputs) < 2 || len(n.Inputs) > 3 || len(n.Outputs) != 1 || !floatTyped(y) {
		return false
	}
	group, out := []*ir.Node{n}, y
	inputs := []*ir.Value{n.Inputs[0], n.Inputs[1], n.In(2)}
	if add := r.soleReader(y); add != nil && add.Op == "Add" && len(add.Outputs) == 1 {
		if z := other(add, y); z != y && sameType(z, y) && sameType(add.Outputs[0], y) {
			group, out = append(group, add), add.Outputs[0]
			inputs = append(inputs, z)
		}
	}
	if inputs[2] == nil && len(inputs) == 3 {
		inputs = inputs[:2]
	}
	attrs := ir.Attrs{}
	for k, v := range n.Attrs {
		attrs[k] = v
	}
	if a, ok := r.activation(out); ok {
		a.set(attrs)
		group, out = append(group, a.node), a.node.Outputs[0]
	}
	if len(group) == 1 {
		return false
	}
	return r.replace(group, out, 1, r.node("FusedConv", nameOf(n), attrs, out, 0, nil, inputs...))
}
