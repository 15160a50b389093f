package passes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weftrt/weft/ir"
)

// Quantization policies: which of the eligible weights to quantize.
//
//   - all: every one.
//   - matmul-except-head-and-embeddings (the default): all but the head and
//     the embeddings. The head is, for each model output, the last weight
//     product (in node order) that the output depends on without another
//     weight product in between: the LM head of a language model, the last
//     layer of an MLP. An embedding is a constant that a Gather reads as
//     its table (a tied embedding/head weight is kept in full precision).
//   - ffn-only: the weights of feed-forward blocks, found by structure, not
//     by name: a weight product whose output reaches another weight
//     product's input through elementwise ops including a nonlinearity
//     (Relu, Gelu, SiLU, x·sigmoid(x), an activation of FusedMatMul, ...)
//     is an up projection and the other one a down projection; a weight
//     product that reaches a down projection through a gating Mul (the up
//     projection of SwiGLU/GeGLU, beside the gate) belongs to the block
//     too. Attention's products never qualify: their path to the next
//     weight goes through the score product and Softmax, which are not
//     elementwise. In a plain MLP every layer is a feed-forward weight.
//   - an explicit list (QuantizeOptions.Layers): the weights named there,
//     by constant name (a Gemm weight that -O2 transposed is also found by
//     its original name) or by the name of the node that reads it. A name
//     that matches nothing is an error: it is most likely a typo.

// ffnElementwise are the ops a feed-forward path may pass through between
// its two products; ffnNonlinear are the nonlinearities among them.
var (
	ffnElementwise = setOf("Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Neg", "Cast", "Identity", "Dropout", "Fused",
		"Erf", "Tanh", "Sigmoid", "Relu", "Gelu", "SiLU", "LeakyRelu", "Elu", "Selu", "Celu", "Softplus", "Softsign",
		"Mish", "HardSwish", "HardSigmoid", "Clip", "PRelu", "ThresholdedRelu")
	ffnNonlinear = setOf("Erf", "Tanh", "Sigmoid", "Relu", "Gelu", "SiLU", "LeakyRelu", "Elu", "Selu", "Celu", "Softplus",
		"Softsign", "Mish", "HardSwish", "HardSigmoid", "Clip", "PRelu", "ThresholdedRelu")
)

func setOf(ops ...string) map[string]bool {
	m := make(map[string]bool, len(ops))
	for _, op := range ops {
		m[op] = true
	}
	return m
}

// ffnMaxDepth bounds the elementwise path between the two products of a
// feed-forward block (a decomposed GELU is about six ops).
const ffnMaxDepth = 12

// selectWeights applies the policy: it sets the skip reason of every
// eligible candidate the policy leaves out.
func selectWeights(g *ir.Graph, uses *Uses, cands []*qcand, opts QuantizeOptions) error {
	if len(opts.Layers) > 0 {
		return selectListed(cands, opts.Layers)
	}
	switch opts.Policy {
	case PolicyAll:
		return nil
	case "", PolicyDefault:
		heads := headNodes(g)
		for _, c := range cands {
			if c.skip != "" {
				continue
			}
			if gatherTable(uses, c.w) {
				c.skip = "embedding (read by Gather)"
			} else if heads[c.n] {
				c.skip = "head (last weight before a model output)"
			}
		}
		return nil
	case PolicyFFNOnly:
		ffn := ffnNodes(uses, cands)
		for _, c := range cands {
			if c.skip == "" && !ffn[c.n] {
				c.skip = "not a feed-forward weight"
			}
		}
		return nil
	}
	return fmt.Errorf("unknown quantization policy %q (want %s, %s, %s or a list of layers)",
		opts.Policy, PolicyAll, PolicyDefault, PolicyFFNOnly)
}

// selectListed keeps the candidates named in layers.
func selectListed(cands []*qcand, layers []string) error {
	used := map[string]bool{}
	for _, c := range cands {
		names := []string{c.w.Name, strings.TrimSuffix(c.w.Name, "_t"), c.n.Name}
		hit := false
		for _, l := range layers {
			if l != "" && slices.Contains(names, l) {
				used[l], hit = true, true
			}
		}
		if !hit && c.skip == "" {
			c.skip = "not in the layer list"
		}
	}
	var missing []string
	for _, l := range layers {
		if !used[l] {
			missing = append(missing, fmt.Sprintf("%q", l))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("layer list names no weight of a MatMul, FusedMatMul or Gemm: %s", strings.Join(missing, ", "))
	}
	return nil
}

// gatherTable reports whether w is the table of some Gather (an embedding).
func gatherTable(uses *Uses, w *ir.Value) bool {
	for _, r := range uses.Readers(w) {
		if r.Op == "Gather" && r.In(0) == w {
			return true
		}
	}
	return false
}

// headNodes returns, for each output of the top-level graph, the last
// weight product (in node order) that the output depends on through
// anything but another weight product.
func headNodes(g *ir.Graph) map[*ir.Node]bool {
	order := map[*ir.Node]int{}
	for i, n := range g.Nodes {
		order[n] = i
	}
	heads := map[*ir.Node]bool{}
	for _, o := range g.Outputs {
		var best *ir.Node
		seen := map[*ir.Node]bool{}
		stack := []*ir.Value{o}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if v == nil || v.Producer == nil || seen[v.Producer] {
				continue
			}
			p := v.Producer
			seen[p] = true
			if weightMatMul(p) {
				if best == nil || order[p] > order[best] {
					best = p
				}
				continue
			}
			stack = append(stack, p.Inputs...)
		}
		if best != nil {
			heads[best] = true
		}
	}
	return heads
}

// ffnReach is one weight product that a weight product's output reaches
// through elementwise ops.
type ffnReach struct {
	to             *ir.Node
	nonlin, gating bool // the path passed a nonlinearity / a Mul of two variables
}

// ffnNodes finds the weight products of feed-forward blocks.
func ffnNodes(uses *Uses, cands []*qcand) map[*ir.Node]bool {
	reaches := make([][]ffnReach, len(cands))
	ffn, down := map[*ir.Node]bool{}, map[*ir.Node]bool{}
	for i, c := range cands {
		reaches[i] = ffnPaths(uses, c.n)
		for _, r := range reaches[i] {
			if r.nonlin {
				ffn[c.n], ffn[r.to], down[r.to] = true, true, true
			}
		}
	}
	for i, c := range cands { // GLU up projections, beside the gate
		for _, r := range reaches[i] {
			if r.gating && down[r.to] {
				ffn[c.n] = true
			}
		}
	}
	return ffn
}

// ffnPaths follows m's output forward through elementwise ops (at most
// ffnMaxDepth of them) to the weight products whose data input it reaches.
func ffnPaths(uses *Uses, m *ir.Node) []ffnReach {
	type item struct {
		v     *ir.Value
		flags uint8 // 1: nonlinear, 2: gating
		depth int
	}
	const nonlin, gating = 1, 2
	start := uint8(0)
	if m.Op == "FusedMatMul" && m.AttrString("activation", "") != "" {
		start = nonlin
	}
	seen := map[*ir.Value]uint8{}
	found := map[*ir.Node]uint8{}
	var order []*ir.Node
	work := []item{{m.Outputs[0], start, 0}}
	for len(work) > 0 {
		it := work[0]
		work = work[1:]
		if f, ok := seen[it.v]; ok && f|it.flags == f {
			continue
		}
		seen[it.v] |= it.flags
		for _, r := range uses.Readers(it.v) {
			if weightMatMul(r) && r.In(0) == it.v {
				if _, ok := found[r]; !ok {
					order = append(order, r)
				}
				found[r] |= it.flags
				continue
			}
			if !ffnElementwise[r.Op] || it.depth >= ffnMaxDepth {
				continue
			}
			f := it.flags
			if ffnNonlinear[r.Op] || (r.Op == "Fused" && fusedNonlinear(r)) {
				f |= nonlin
			}
			if (r.Op == "Mul" || r.Op == "Fused") && variables(r) >= 2 {
				f |= gating
			}
			for _, o := range r.Outputs {
				work = append(work, item{o, f, it.depth + 1})
			}
		}
	}
	out := make([]ffnReach, len(order))
	for i, n := range order {
		out[i] = ffnReach{to: n, nonlin: found[n]&nonlin != 0, gating: found[n]&gating != 0}
	}
	return out
}

// fusedNonlinear reports whether a Fused node's body holds a nonlinearity.
func fusedNonlinear(n *ir.Node) bool {
	for _, sg := range n.Subgraphs() {
		for _, m := range sg.Nodes {
			if ffnNonlinear[m.Op] {
				return true
			}
		}
	}
	return false
}

// variables counts n's distinct non-constant inputs.
func variables(n *ir.Node) int {
	var vs []*ir.Value
	for _, v := range n.Inputs {
		if v != nil && !v.IsConst() && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return len(vs)
}
