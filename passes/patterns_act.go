package passes

import (
	"math"

	"github.com/weftrt/weft/ir"
)

// product is a flattened product: coef · Π factors.
type product struct {
	coef    float64
	factors []*ir.Value
	nodes   []*ir.Node
}

// maxFactors bounds the products the activation matchers look at.
const maxFactors = 6

// productOf flattens the product computed by n (a Mul, or a Div by a scalar
// constant): it descends into operands that are themselves such products
// read by nothing else, and gathers scalar constants into coef.
func (r *rewriter) productOf(n *ir.Node) (product, bool) {
	p := product{coef: 1}
	var walk func(m *ir.Node) bool
	operand := func(m *ir.Node, v *ir.Value) bool {
		if c, ok := scalarOf(v); ok {
			p.coef *= c
			return true
		}
		if q := r.def(v, "Mul", "Div"); q != nil && m.Inputs[0] != m.Inputs[1] && r.soleReader(v) == m && walk(q) {
			return true
		}
		p.factors = append(p.factors, v)
		return len(p.factors) <= maxFactors
	}
	walk = func(m *ir.Node) bool {
		if len(m.Inputs) != 2 || len(m.Outputs) != 1 {
			return false
		}
		switch m.Op {
		case "Mul":
			p.nodes = append(p.nodes, m)
			return operand(m, m.Inputs[0]) && operand(m, m.Inputs[1])
		case "Div":
			c, ok := scalarOf(m.Inputs[1])
			if !ok || c == 0 {
				return false
			}
			p.nodes = append(p.nodes, m)
			p.coef /= c
			return operand(m, m.Inputs[0])
		}
		return false
	}
	if !walk(n) {
		return product{}, false
	}
	return p, true
}

// near reports whether c is want within the relative tolerance tol.
func near(c, want, tol float64) bool { return math.Abs(c-want) <= tol*math.Abs(want) }

// constTol is the relative tolerance for irrational constants (√2,
// √(2/π), 0.044715) as exporters round them, f16 included.
const constTol = 1e-3

// onePlus matches Add(1, op(t)) in either order and returns the op node.
func (r *rewriter) onePlus(v *ir.Value, op string) (add, f *ir.Node) {
	add = r.def(v, "Add")
	if add == nil || len(add.Inputs) != 2 {
		return nil, nil
	}
	for i := 0; i < 2; i++ {
		if f = r.def(add.Inputs[i], op); f != nil && isScalar(add.Inputs[1-i], 1, 1e-6) {
			return add, f
		}
	}
	return nil, nil
}

// gelu matches the exported forms of GELU ending at the Mul or Div n, in
// any order of the products:
//
//	x · 0.5 · (1 + Erf(x / √2))        (or Erf(x · 1/√2))
//	x · 0.5 · (1 + Tanh(√(2/π) · (x + 0.044715 · x³)))
//
// (x³ as Pow(x, 3) or a product of x's) and replaces it by
// Gelu(x; approximate "none" or "tanh").
func (r *rewriter) gelu(n *ir.Node) bool {
	p, ok := r.productOf(n)
	if !ok || len(p.factors) != 2 || !near(p.coef, 0.5, 1e-6) {
		return false
	}
	for i := 0; i < 2; i++ {
		x, e := p.factors[1-i], p.factors[i]
		if !floatTyped(x) || !sameType(n.Outputs[0], x) {
			continue
		}
		if add, erf := r.onePlus(e, "Erf"); add != nil {
			if inner, ok := r.scaled(erf.In(0), x, 1/math.Sqrt2); ok {
				group := append(append(p.nodes, add, erf), inner...)
				return r.geluNode(n, x, "none", group)
			}
		}
		if add, tanh := r.onePlus(e, "Tanh"); add != nil {
			if inner, ok := r.tanhArg(tanh.In(0), x); ok {
				group := append(append(p.nodes, add, tanh), inner...)
				return r.geluNode(n, x, "tanh", group)
			}
		}
	}
	return false
}

func (r *rewriter) geluNode(n *ir.Node, x *ir.Value, approx string, group []*ir.Node) bool {
	attrs := ir.Attrs{"approximate": {Kind: ir.AttrString, Str: approx}}
	return r.replace(group, n.Outputs[0], 1, r.node("Gelu", nameOf(n), attrs, n.Outputs[0], 0, nil, x))
}

// scaled matches t = x · c (a product whose only factor is x) with c within
// constTol of want, and returns the nodes.
func (r *rewriter) scaled(t, x *ir.Value, want float64) ([]*ir.Node, bool) {
	m := r.def(t, "Mul", "Div")
	if m == nil {
		return nil, false
	}
	p, ok := r.productOf(m)
	if !ok || len(p.factors) != 1 || p.factors[0] != x || !near(p.coef, want, constTol) {
		return nil, false
	}
	return p.nodes, true
}

// tanhArg matches √(2/π) · (x + 0.044715 · x³).
func (r *rewriter) tanhArg(t, x *ir.Value) ([]*ir.Node, bool) {
	m := r.def(t, "Mul", "Div")
	if m == nil {
		return nil, false
	}
	p, ok := r.productOf(m)
	if !ok || len(p.factors) != 1 || !near(p.coef, math.Sqrt(2/math.Pi), constTol) {
		return nil, false
	}
	add := r.def(p.factors[0], "Add")
	if add == nil || len(add.Inputs) != 2 {
		return nil, false
	}
	for i := 0; i < 2; i++ {
		if add.Inputs[i] != x {
			continue
		}
		if cube, ok := r.cubic(add.Inputs[1-i], x); ok {
			return append(append(p.nodes, add), cube...), true
		}
	}
	return nil, false
}

// cubic matches 0.044715 · x³, x³ as Pow(x, 3) or x·x·x.
func (r *rewriter) cubic(v, x *ir.Value) ([]*ir.Node, bool) {
	m := r.def(v, "Mul", "Div")
	if m == nil {
		return nil, false
	}
	p, ok := r.productOf(m)
	if !ok || !near(p.coef, 0.044715, constTol) {
		return nil, false
	}
	nodes, power := p.nodes, 0
	for _, f := range p.factors {
		switch {
		case f == x:
			power++
		case r.def(f, "Pow") != nil && f.Producer.In(0) == x && isScalar(f.Producer.In(1), 3, 0):
			power += 3
			nodes = append(nodes, f.Producer)
		default:
			return nil, false
		}
	}
	return nodes, power == 3
}

// silu matches Mul(x, Sigmoid(x)) in either order and replaces it by SiLU(x).
func (r *rewriter) silu(n *ir.Node) bool {
	if n.Op != "Mul" || len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return false
	}
	for i := 0; i < 2; i++ {
		x := n.Inputs[1-i]
		s := r.def(n.Inputs[i], "Sigmoid")
		if s == nil || s.In(0) != x || !floatTyped(x) || !sameType(n.Outputs[0], x) {
			continue
		}
		return r.replace([]*ir.Node{n, s}, n.Outputs[0], 1, r.node("SiLU", nameOf(n), nil, n.Outputs[0], 0, nil, x))
	}
	return false
}
