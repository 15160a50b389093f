package passes

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// foldGrowth is how many bytes a folded node may produce beyond the bytes of
// its constant inputs: folding may turn a tiny recipe (ConstantOfShape of a
// 4-byte shape, DequantizeLinear of int8 weights) into a big constant, and
// past this slack the recipe is the smaller model.
const foldGrowth = 64 << 10

// foldPass replaces computations whose result is known at compile time by
// constants, in topological order, so that whole constant subgraphs fold:
//
//   - a deterministic node without subgraphs whose inputs are all constants
//     is evaluated with Options.Eval (nil: such nodes stay);
//   - an integer or bool value that shape inference computed from static
//     shapes (Shape, Size and the arithmetic that follows them: Gather,
//     Concat, Slice, Cast, Add, ...) becomes a constant even though its
//     inputs are not, so that Reshape targets and friends become constants.
//     Loop and Scan bodies are left to the first rule: a value there may
//     change between iterations.
//
// A folded output keeps its Value (so every reader, graph outputs included,
// stays as it is); the Value simply becomes a constant of its graph, named
// after the node when it had no name. Nothing folds whose output would
// exceed Options.FoldLimit bytes, or grow past its inputs by more than
// foldGrowth. An evaluation error leaves the node in place: it will fail at
// run time with the kernel's message, not at compile time. Constants that
// folding leaves unused are dropped.
func foldPass(g *ir.Graph, ctx *Context) (Change, error) {
	s := newState()
	typed, err := s.run(g)
	if err != nil {
		return Change{}, fmt.Errorf("re-inferring: %w", err)
	}
	f := &folder{s: s, eval: ctx.Opts.Eval, limit: ctx.Opts.FoldLimit, loops: loopBodies(g)}
	if f.limit <= 0 {
		f.limit = DefaultFoldLimit
	}
	ch := Change{Typed: typed} // earlier rewrites may have left types to refine
	g.Walk(func(sg *ir.Graph) {
		kept := sg.Nodes[:0]
		for _, n := range sg.Nodes {
			ts := f.fold(sg, n)
			if ts == nil {
				kept = append(kept, n)
				continue
			}
			for i, o := range n.Outputs {
				o.Producer, o.Const = nil, ts[i]
				if o.Name == "" {
					o.Name = prefix(n) + "_folded"
					if len(n.Outputs) > 1 {
						o.Name += fmt.Sprint(i)
					}
				}
				sg.Consts = append(sg.Consts, o)
				ch.Consts--
				ch.BytesSaved -= int64(len(ts[i].Data))
			}
			ch.Removed++
		}
		clear(sg.Nodes[len(kept):])
		sg.Nodes = kept
	})
	if !ch.Changed() {
		return ch, nil
	}
	dead, err := dcePass(g, ctx)
	ch.Add(dead)
	return ch, err
}

type folder struct {
	s     *state // inference run with the known values of small tensors
	eval  func(n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error)
	limit int64
	loops map[*ir.Graph]bool
}

// fold returns the constant outputs of n, or nil when n stays.
func (f *folder) fold(sg *ir.Graph, n *ir.Node) []*ir.Tensor {
	if len(n.Outputs) == 0 || !isDeterministic(n) || len(n.Subgraphs()) > 0 {
		return nil
	}
	for _, o := range n.Outputs {
		if o == nil || !o.DType.Valid() || !o.Shape.Static() {
			return nil // an output must be typed for the size checks and the result checks
		}
	}
	allConst, inBytes := len(n.Inputs) > 0, int64(0)
	for _, v := range n.Inputs {
		if v == nil {
			continue
		}
		if !v.IsConst() {
			allConst = false
			break
		}
		inBytes += int64(len(v.Const.Data))
	}
	if allConst && f.eval != nil {
		return f.evaluate(n, inBytes)
	}
	if f.loops[sg] && !allConst {
		return nil
	}
	return f.known(n)
}

// known builds n's outputs from the values inference tracked (integer and
// bool values only: their arithmetic is exact).
func (f *folder) known(n *ir.Node) []*ir.Tensor {
	out := make([]*ir.Tensor, len(n.Outputs))
	for i, o := range n.Outputs {
		e, ok := f.s.vals[o]
		if !ok || !(o.DType.IsInt() || o.DType == ir.Bool) || int64(len(e)) != o.Shape.NumElements() ||
			o.DType.Bytes(int64(len(e))) > f.limit {
			return nil
		}
		t := ir.NewTensor(o.DType, o.Shape.Ints())
		for j, x := range e {
			if !x.known {
				return nil
			}
			t.SetInt64(j, x.i)
		}
		out[i] = t
	}
	return out
}

// evaluate runs n on its constant inputs, within the size limits.
func (f *folder) evaluate(n *ir.Node, inBytes int64) (out []*ir.Tensor) {
	outBytes := int64(0)
	for _, o := range n.Outputs {
		b := o.DType.Bytes(o.Shape.NumElements())
		if b < 0 || b > f.limit {
			return nil
		}
		outBytes += b
	}
	if outBytes > inBytes+foldGrowth {
		return nil
	}
	in := make([]*ir.Tensor, len(n.Inputs))
	for i, v := range n.Inputs {
		if v != nil {
			in[i] = v.Const
		}
	}
	defer func() {
		if recover() != nil {
			out = nil // an evaluator that panics leaves the node to run time
		}
	}()
	res, err := f.eval(n, in)
	if err != nil || len(res) != len(n.Outputs) {
		return nil
	}
	for i, t := range res {
		o := n.Outputs[i]
		if t == nil || t.Check() != nil || t.DType != o.DType || !ir.ShapeOf(t.Shape).Equal(o.Shape) {
			return nil // the kernel disagrees with inference: leave it to run time
		}
		if aliasesInput(t, in) {
			res[i] = t.Clone() // a constant owns its data
		}
	}
	return res
}

// aliasesInput reports whether t is one of the input tensors (an evaluator may
// return an input unchanged, as Identity-like kernels do).
func aliasesInput(t *ir.Tensor, in []*ir.Tensor) bool {
	for _, x := range in {
		if x == t {
			return true
		}
	}
	return false
}
