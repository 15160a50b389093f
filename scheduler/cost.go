package scheduler

import (
	"github.com/weftrt/weft/ir"
)

// Cost estimates the work of a node or a graph: the first input to the cost
// model (time ≈ max(FLOPs / peak, Bytes / bandwidth) + launch overhead).
//
// The estimates are deliberately simple and documented per op family
// below; they count what a straightforward kernel does, not what a clever
// one avoids.
type Cost struct {
	// FLOPs counts arithmetic operations; a multiply-add is 2. Integer
	// arithmetic counts the same as floating-point.
	FLOPs int64
	// Bytes counts the bytes a node reads and writes: every input (weights
	// included, at their stored size, so a Q4_0 weight counts its blocks)
	// plus every output. Intermediates of a graph are counted at each node
	// that touches them: this is traffic, not footprint.
	Bytes int64
	// Unknown counts the nodes whose shapes were not static; they add
	// nothing to FLOPs and only their known sizes to Bytes.
	Unknown int
}

// Add accumulates d into c.
func (c *Cost) Add(d Cost) {
	c.FLOPs += d.FLOPs
	c.Bytes += d.Bytes
	c.Unknown += d.Unknown
}

// GraphCost sums NodeCost over g and its subgraphs. A subgraph counts once
// whatever the trip count of its Loop or Scan (unknown at compile time), and
// both branches of an If count. The body of a Fused node is not walked: the
// node's own cost covers it.
func GraphCost(g *ir.Graph) Cost {
	var c Cost
	for _, n := range g.Nodes {
		c.Add(NodeCost(n))
		if n.Op == "Fused" {
			continue
		}
		for _, sg := range n.Subgraphs() {
			c.Add(GraphCost(sg))
		}
	}
	return c
}

// elementwise ops cost one operation per output element.
var elementwise = map[string]bool{}

func init() {
	for _, op := range []string{
		// unary math and activations
		"Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos", "Cosh", "Erf", "Exp",
		"Floor", "Log", "Neg", "Reciprocal", "Round", "Sign", "Sin", "Sinh", "Sqrt", "Tan", "Tanh",
		"Relu", "Sigmoid", "Softplus", "Softsign", "Mish", "Celu", "Elu", "Selu", "Gelu", "LeakyRelu",
		"PRelu", "HardSigmoid", "HardSwish", "ThresholdedRelu", "Shrink", "Clip", "SiLU", "IsNaN",
		"IsInf", "Not", "BitwiseNot", "Cast", "CastLike",
		// binary and ternary
		"Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "BitShift", "BitwiseAnd",
		"BitwiseOr", "BitwiseXor", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Where",
		// variadic
		"Sum", "Max", "Min", "Mean",
	} {
		elementwise[op] = true
	}
}

// Per-element operation counts of the normalizations: mean (1), variance
// (subtract, square, accumulate: 3), normalize (subtract, multiply by the
// reciprocal deviation: 2), then scale (1) and bias (1) where the op has them.
var perElement = map[string]int64{
	"BatchNormalization":        2, // inference form: one multiply-add with folded statistics
	"LayerNormalization":        8,
	"InstanceNormalization":     8,
	"GroupNormalization":        8,
	"MeanVarianceNormalization": 6,
	"RMSNormalization":          4, // square, accumulate, multiply by the reciprocal RMS, scale
	"Softmax":                   5, // max, subtract, exp, sum, divide
	"LogSoftmax":                5,
	"Hardmax":                   1,
}

// NodeCost estimates one node's FLOPs and bytes:
//
//	MatMul, QMatMul     2·(output elements)·K
//	FusedMatMul         MatMul + 1/element for a bias + 1/element for an activation
//	Gemm                2·M·N·K + M·N when C is present
//	Conv, FusedConv     2·(output elements)·(C/group)·(kernel size) + 1/element for
//	                    a bias (FusedConv: + residual, + activation)
//	ConvTranspose       2·(input elements)·(M/group)·(kernel size) + bias
//	Max/Average/LpPool  (output elements)·(kernel size); Global*Pool: input elements
//	normalizations      per element, see perElement; LRN (2·size + 3)/element
//	Reduce*             1 per input element
//	Attention           2·B·H·Sq·Skv·(D + Dv) + 6·B·H·Sq·Skv (scale, softmax) + mask
//	elementwise         1 per output element (variadic Sum/Max/Min: k-1, Mean: k)
//	Fused               the elementwise count of its body nodes
//	everything else     0 FLOPs (data movement: Reshape, Transpose, Gather, ...)
//
// Bytes is always the sum of the stored sizes of inputs and outputs.
func NodeCost(n *ir.Node) Cost {
	var c Cost
	known := true
	for _, v := range n.Inputs {
		b, ok := valueBytes(v)
		c.Bytes += b
		known = known && ok
	}
	for _, v := range n.Outputs {
		b, ok := valueBytes(v)
		c.Bytes += b
		known = known && ok
	}
	f, ok := flops(n)
	if !ok || !known {
		c.Unknown = 1
	}
	if ok {
		c.FLOPs = f
	}
	return c
}

// valueBytes is the stored size of a value (0, false when not static).
func valueBytes(v *ir.Value) (int64, bool) {
	if v == nil {
		return 0, true
	}
	if v.Const != nil {
		return int64(len(v.Const.Data)), true
	}
	n := v.Shape.NumElements()
	if n < 0 || !v.DType.Valid() {
		return 0, false
	}
	b := v.DType.Bytes(n)
	return max(b, 0), b >= 0
}

// dims returns v's static dims, or nil, false.
func dims(v *ir.Value) ([]int64, bool) {
	if v == nil || !v.Shape.Static() {
		return nil, false
	}
	return v.Shape.Ints(), true
}

func elems(v *ir.Value) (int64, bool) {
	d, ok := dims(v)
	if !ok {
		return 0, false
	}
	return ir.NumElements(d), true
}

func prod(d []int64) int64 { return ir.NumElements(d) }

// flops implements the table of NodeCost; ok is false when a shape it
// needs is not static.
func flops(n *ir.Node) (int64, bool) {
	var first *ir.Value
	if len(n.Outputs) > 0 {
		first = n.Outputs[0]
	}
	out, outOK := elems(first)
	switch op := n.Op; {
	case op == "MatMul" || op == "FusedMatMul" || op == "QMatMul":
		a, ok := dims(n.In(0))
		if !ok || !outOK || len(a) == 0 {
			return 0, false
		}
		f := 2 * out * a[len(a)-1]
		if op == "FusedMatMul" {
			f += extra(n, out, 2, "")
		}
		return f, true
	case op == "Gemm":
		a, ok := dims(n.In(0))
		if !ok || !outOK || len(a) != 2 {
			return 0, false
		}
		k := a[1]
		if n.AttrInt("transA", 0) != 0 {
			k = a[0]
		}
		f := 2 * out * k
		if n.In(2) != nil {
			f += out
		}
		return f, true
	case op == "Conv" || op == "FusedConv":
		w, ok := dims(n.In(1))
		if !ok || !outOK || len(w) < 2 {
			return 0, false
		}
		f := 2 * out * prod(w[1:])
		if op == "FusedConv" {
			return f + extra(n, out, 2, "Z"), true
		}
		if n.In(2) != nil {
			f += out
		}
		return f, true
	case op == "ConvTranspose":
		w, ok := dims(n.In(1))
		x, xok := elems(n.In(0))
		if !ok || !xok || !outOK || len(w) < 2 {
			return 0, false
		}
		f := 2 * x * prod(w[1:])
		if n.In(2) != nil {
			f += out
		}
		return f, true
	case op == "MaxPool" || op == "AveragePool" || op == "LpPool":
		if !outOK {
			return 0, false
		}
		return out * prod(n.AttrInts("kernel_shape", nil)), true
	case op == "GlobalMaxPool" || op == "GlobalAveragePool" || op == "GlobalLpPool",
		len(op) > 6 && op[:6] == "Reduce", op == "ArgMax", op == "ArgMin":
		x, ok := elems(n.In(0))
		return x, ok
	case op == "LRN":
		return out * (2*n.AttrInt("size", 1) + 3), outOK
	case perElement[op] != 0:
		return out * perElement[op], outOK
	case op == "Attention":
		return attentionFlops(n)
	case op == "Fused":
		body := n.AttrGraph("body")
		if body == nil || !outOK {
			return 0, false
		}
		var f int64
		for _, bn := range body.Nodes {
			if bf, ok := flops(bn); ok {
				f += bf
			} else if elementwise[bn.Op] {
				f += out // body shapes not inferred: count at the output size
			}
		}
		return f, true
	case elementwise[op]:
		switch op {
		case "Sum", "Max", "Min":
			return out * int64(max(len(n.Inputs)-1, 1)), outOK
		case "Mean":
			return out * int64(len(n.Inputs)), outOK
		}
		return out, outOK
	}
	return 0, true
}

// extra counts a fused op's epilogue: the bias at input biasIdx, an
// optional residual input, and the activation, one operation per element each.
func extra(n *ir.Node, out int64, biasIdx int, residual string) int64 {
	var f int64
	if n.In(biasIdx) != nil {
		f += out
	}
	if residual == "Z" && n.In(3) != nil {
		f += out
	}
	if n.AttrString("activation", "") != "" {
		f += out
	}
	return f
}

// attentionFlops: Q·Kᵀ (2·D per score), scale (1), mask (1 when present),
// softmax (5), then P·V (2·Dv per score).
func attentionFlops(n *ir.Node) (int64, bool) {
	q, ok1 := dims(n.In(0))
	k, ok2 := dims(n.In(1))
	v, ok3 := dims(n.In(2))
	if !ok1 || !ok2 || !ok3 || len(q) != 4 || len(k) != 4 || len(v) != 4 {
		return 0, false
	}
	scores := q[0] * q[1] * q[2] * k[2]
	f := scores * (2*q[3] + 2*v[3] + 1 + 5)
	if n.In(3) != nil {
		f += scores
	}
	return f, true
}
