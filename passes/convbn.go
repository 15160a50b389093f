package passes

import (
	"github.com/weftrt/weft/ir"
)

// convBNPass folds per-output-channel affine ops that follow a Conv into the
// Conv's weights and bias. lower turns BatchNormalization into Mul + Add by
// [C,1,...,1] constants; after a Conv both fold away:
//
//	Conv(X, W, B) · s  -> Conv(X, W·s, B·s)     (s per output channel)
//	Conv(X, W, B) / s  -> Conv(X, W/s, B/s)
//	Conv(X, W, B) + t  -> Conv(X, W, B + t)     (t + Conv likewise)
//	Conv(X, W, B) - t  -> Conv(X, W, B - t)
//
// repeatedly, while the Conv's output has exactly one reader of that form
// and is no graph output. W and B (absent: zero) must be constants of a
// float dtype (f32, f64, f16; bf16 is left alone), s and t constants of the
// Conv's dtype that broadcast as one value per output channel ([C,1,...,1],
// [1,C,1,...,1], scalars) without changing the output's shape. The Conv
// takes over the last folded node's output value (name, readers, graph
// outputs); new weights are fresh constants, so a W shared with another
// node is not touched. Arithmetic is in float64, rounded once.
func convBNPass(g *ir.Graph, ctx *Context) (Change, error) {
	uses := ctx.Uses()
	var ch Change
	g.Walk(func(sg *ir.Graph) {
		dead := map[*ir.Node]bool{}
		for _, n := range sg.Nodes {
			if n.Op != "Conv" || dead[n] {
				continue
			}
			folded := foldIntoConv(sg, n, uses, dead)
			if folded > 0 {
				ch.Fused += folded
				ch.Consts -= 2
				ch.BytesSaved -= int64(len(n.In(1).Const.Data) + len(n.In(2).Const.Data))
			}
		}
		if len(dead) > 0 {
			kept := sg.Nodes[:0]
			for _, n := range sg.Nodes {
				if !dead[n] {
					kept = append(kept, n)
				}
			}
			clear(sg.Nodes[len(kept):])
			sg.Nodes = kept
		}
	})
	if !ch.Changed() {
		return ch, nil
	}
	// The original weights and biases may now be unused.
	unused, err := dcePass(g, ctx)
	ch.Add(unused)
	return ch, err
}

// convAffine is the per-channel affine map y = x·scale + shift being folded.
type convAffine struct {
	scale, shift []float64
}

// foldIntoConv folds the affine readers of conv n, marks them dead and
// returns how many it folded.
func foldIntoConv(sg *ir.Graph, n *ir.Node, uses *Uses, dead map[*ir.Node]bool) int {
	if len(n.Outputs) != 1 || n.Outputs[0] == nil {
		return 0
	}
	x, w, b := n.In(0), n.In(1), n.In(2)
	y := n.Outputs[0]
	dt := y.DType
	if x == nil || !w.IsConst() || (b != nil && !b.IsConst()) || w.DType != dt ||
		(dt != ir.Float32 && dt != ir.Float64 && dt != ir.Float16) || y.Shape == nil || len(y.Shape) < 3 ||
		len(w.Const.Shape) != len(y.Shape) {
		return 0
	}
	c := w.Const.Shape[0] // output channels
	if d := y.Shape[1]; d.Known() && d.Size != c {
		return 0
	}
	if b != nil && (b.DType != dt || len(b.Const.Shape) != 1 || b.Const.Shape[0] != c) {
		return 0
	}
	aff := convAffine{scale: make([]float64, c), shift: make([]float64, c)}
	for i := range aff.scale {
		aff.scale[i] = 1
	}
	var last *ir.Node
	folded := 0
	for {
		m := uses.SingleUser(y)
		if m == nil || m.Op != "Mul" && m.Op != "Add" && m.Op != "Sub" && m.Op != "Div" ||
			len(m.Inputs) != 2 || len(m.Outputs) != 1 || !typesMatch(m.Outputs[0], y) {
			break
		}
		k := m.In(1)
		if k == y {
			if m.Op == "Sub" || m.Op == "Div" || m.In(0) == y {
				break // t - y, s / y, y op y
			}
			k = m.In(0)
		}
		vals, ok := perChannel(k, dt, c, len(y.Shape))
		if !ok {
			break
		}
		for i := range vals {
			switch m.Op {
			case "Mul":
				aff.scale[i] *= vals[i]
				aff.shift[i] *= vals[i]
			case "Div":
				aff.scale[i] /= vals[i]
				aff.shift[i] /= vals[i]
			case "Add":
				aff.shift[i] += vals[i]
			case "Sub":
				aff.shift[i] -= vals[i]
			}
		}
		dead[m] = true
		last, y = m, m.Outputs[0]
		folded++
	}
	if last == nil {
		return 0
	}
	// W'[o, ...] = W[o, ...]·scale[o]; B'[o] = B[o]·scale[o] + shift[o].
	// The scale and shift are accumulated in float64, so W' and B' are
	// rounded once, to the Conv's dtype.
	wt := w.Const
	nw := ir.NewTensor(dt, wt.Shape)
	per := nw.Len() / int(c)
	if dt == ir.Float32 { // the common case, without per-element dispatch
		src, dst := wt.Float32s(), nw.Float32s()
		for o := 0; o < int(c); o++ {
			for j := o * per; j < (o+1)*per; j++ {
				dst[j] = float32(float64(src[j]) * aff.scale[o])
			}
		}
	} else {
		for o := 0; o < int(c); o++ {
			for j := o * per; j < (o+1)*per; j++ {
				nw.SetFloat64(j, wt.Float64(j)*aff.scale[o])
			}
		}
	}
	nb := ir.NewTensor(dt, []int64{c})
	for o := 0; o < int(c); o++ {
		bo := 0.0
		if b != nil {
			bo = b.Const.Float64(o)
		}
		nb.SetFloat64(o, bo*aff.scale[o]+aff.shift[o])
	}
	base := prefix(n)
	ins := append([]*ir.Value{}, n.Inputs...)
	for len(ins) < 3 {
		ins = append(ins, nil)
	}
	ins[1] = sg.AddConst(base+"_w_folded", nw)
	ins[2] = sg.AddConst(base+"_b_folded", nb)
	n.Inputs = ins
	// The Conv produces the last folded node's output in its own place:
	// every reader of that output comes after the last node, so after it.
	n.Outputs[0] = y
	y.Producer = n
	return folded
}

// perChannel returns the per-output-channel values of constant k when it
// broadcasts against a rank-r Conv output [N, C, ...] as one value per
// channel (or one value for all), without growing the output.
func perChannel(k *ir.Value, dt ir.DType, c int64, r int) ([]float64, bool) {
	if !k.IsConst() || k.DType != dt || len(k.Const.Shape) > r {
		return nil, false
	}
	shape := k.Const.Shape
	chAxis := len(shape) - (r - 1) // the axis of k aligned with the output's channel axis
	n := int64(1)
	for i, d := range shape {
		switch {
		case d == 1:
		case i == chAxis && d == c:
			n = c
		default:
			return nil, false
		}
	}
	vals := make([]float64, c)
	for i := range vals {
		if n == 1 {
			vals[i] = k.Const.Float64(0)
		} else {
			vals[i] = k.Const.Float64(i)
		}
	}
	return vals, true
}
