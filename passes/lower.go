package passes

import (
	"fmt"
	"math"
	"strings"

	"github.com/weftrt/weft/ir"
)

// Lower runs the lower pass on g alone (after InferShapes).
func Lower(g *ir.Graph) (Change, error) { return lowerPass(g, NewContext(g)) }

// lowerPass rewrites core ops that have a simpler equivalent, once inference
// has established the dtypes and ranks that the rewrite depends on; an op
// whose types are not known stays as it is (its kernel exists):
//
//	Gemm               -> [Transpose] MatMul [Mul alpha] [Add beta*C]
//	BatchNormalization -> Mul scale' + Add bias'  (inference mode, constant
//	                      statistics folded into [C,1,...,1] constants)
//
// The last new node takes over the original output value, so names, graph
// outputs and readers stay as they were.
func lowerPass(g *ir.Graph, _ *Context) (Change, error) {
	var ch Change
	var err error
	g.Walk(func(sg *ir.Graph) {
		if err != nil {
			return
		}
		l := &lowerer{g: sg, s: newState()}
		var nodes []*ir.Node
		for _, n := range sg.Nodes {
			l.out = l.out[:0]
			ok := false
			switch n.Op {
			case "Gemm":
				ok = l.gemm(n)
			case "BatchNormalization":
				ok = l.batchNorm(n)
			}
			if !ok {
				nodes = append(nodes, n)
				continue
			}
			for _, m := range l.out {
				if e := l.s.node(m); e != nil && err == nil {
					err = fmt.Errorf("graph %q: lowering node %v: %v: %w", sg.Name, n, m, e)
				}
			}
			nodes = append(nodes, l.out...)
			ch.Removed++
			ch.Added += len(l.out)
		}
		sg.Nodes = nodes
		ch.Consts -= l.consts
		ch.BytesSaved -= l.bytes
	})
	return ch, err
}

type lowerer struct {
	g      *ir.Graph
	s      *state
	out    []*ir.Node // the replacement of the node being lowered
	consts int
	bytes  int64
}

// emit appends a node; result is its output value, or a fresh one when nil.
func (l *lowerer) emit(op, name string, result *ir.Value, attrs ir.Attrs, inputs ...*ir.Value) *ir.Value {
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	n := &ir.Node{Name: name, Op: op, Inputs: inputs, Attrs: attrs}
	if result == nil {
		result = l.g.NewValue("", ir.Invalid, nil)
	}
	result.Producer = n
	n.Outputs = []*ir.Value{result}
	l.out = append(l.out, n)
	return result
}

func (l *lowerer) constant(name string, t *ir.Tensor) *ir.Value {
	l.consts++
	l.bytes += int64(len(t.Data))
	return l.g.AddConst(name, t)
}

// scalar returns a new rank-0 constant of dtype dt.
func (l *lowerer) scalar(name string, dt ir.DType, v float64) *ir.Value {
	t := ir.NewTensor(dt, nil)
	t.SetFloat64(0, v)
	return l.constant(name, t)
}

// transposed2D returns a rank-2 tensor transposed.
func transposed2D(t *ir.Tensor) *ir.Tensor {
	r, c := t.Shape[0], t.Shape[1]
	out := ir.NewTensor(t.DType, []int64{c, r})
	es := int64(t.DType.Size())
	for i := int64(0); i < r; i++ {
		for j := int64(0); j < c; j++ {
			copy(out.Data[(j*r+i)*es:(j*r+i+1)*es], t.Data[(i*c+j)*es:(i*c+j+1)*es])
		}
	}
	return out
}

func typedRank(v *ir.Value, dt ir.DType, rank int) bool {
	return v != nil && v.DType == dt && v.Shape != nil && (rank < 0 || len(v.Shape) == rank)
}

// prefix names the nodes that replace n.
func prefix(n *ir.Node) string {
	if n.Name != "" {
		return n.Name
	}
	return strings.ToLower(n.Op)
}

func (l *lowerer) gemm(n *ir.Node) bool {
	a, b, c, y := n.In(0), n.In(1), n.In(2), n.Outputs[0]
	dt := y.DType
	alpha, beta := float64(n.AttrFloat("alpha", 1)), float64(n.AttrFloat("beta", 1))
	if c == nil {
		beta = 0
	}
	if !dt.Valid() || !typedRank(a, dt, 2) || !typedRank(b, dt, 2) || len(n.Outputs) != 1 ||
		(beta != 0 && !typedRank(c, dt, -1)) {
		return false
	}
	if !dt.IsFloat() && (alpha != 1 || (beta != 0 && beta != 1)) {
		return false // integer Gemm with fractional factors: keep the kernel's rounding
	}
	if !dt.IsFloat() && !dt.IsInt() {
		return false
	}
	operand := func(v *ir.Value, trans bool, suffix string) *ir.Value {
		switch {
		case !trans:
			return v
		case v.IsConst():
			return l.constant(v.Name+"_t", transposed2D(v.Const))
		}
		return l.emit("Transpose", prefix(n)+"/transpose"+suffix, nil, ir.Attrs{"perm": {Kind: ir.AttrInts, Ints: []int64{1, 0}}}, v)
	}
	at := operand(a, n.AttrInt("transA", 0) != 0, "A")
	bt := operand(b, n.AttrInt("transB", 0) != 0, "B")
	last := func(more bool) *ir.Value {
		if more {
			return nil
		}
		return y
	}
	p := l.emit("MatMul", prefix(n)+"/matmul", last(alpha != 1 || beta != 0), nil, at, bt)
	if alpha != 1 {
		p = l.emit("Mul", prefix(n)+"/alpha", last(beta != 0), nil, p, l.scalar(prefix(n)+"_alpha", dt, alpha))
	}
	if beta != 0 {
		cc := c
		if beta != 1 {
			if c.IsConst() {
				t := c.Const.Clone()
				for i := 0; i < t.Len(); i++ {
					t.SetFloat64(i, beta*t.Float64(i))
				}
				cc = l.constant(c.Name+"_beta", t)
			} else {
				cc = l.emit("Mul", prefix(n)+"/beta", nil, nil, c, l.scalar(prefix(n)+"_beta", dt, beta))
			}
		}
		l.emit("Add", prefix(n)+"/add", y, nil, p, cc)
	}
	return true
}

func (l *lowerer) batchNorm(n *ir.Node) bool {
	x, y := n.In(0), n.Outputs[0]
	if len(n.Outputs) != 1 || n.AttrInt("training_mode", 0) != 0 || x == nil || !x.DType.IsFloat() ||
		x.Shape == nil || len(x.Shape) < 2 || len(n.Inputs) != 5 {
		return false
	}
	params := make([]*ir.Tensor, 4)
	for i := range params {
		v := n.In(1 + i)
		if !v.IsConst() || !v.Const.DType.IsFloat() || len(v.Const.Shape) != 1 {
			return false
		}
		params[i] = v.Const
	}
	ch := int64(params[0].Len())
	if d := x.Shape[1]; d.Known() && d.Size != ch {
		return false
	}
	for _, p := range params {
		if int64(p.Len()) != ch {
			return false
		}
	}
	shape := make([]int64, len(x.Shape)-1)
	for i := range shape {
		shape[i] = 1
	}
	shape[0] = ch
	scale, bias := ir.NewTensor(x.DType, shape), ir.NewTensor(x.DType, shape)
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	for i := 0; i < int(ch); i++ {
		s := params[0].Float64(i) / math.Sqrt(params[3].Float64(i)+eps)
		scale.SetFloat64(i, s)
		bias.SetFloat64(i, params[1].Float64(i)-params[2].Float64(i)*s)
	}
	m := l.emit("Mul", prefix(n)+"/scale", nil, nil, x, l.constant(prefix(n)+"_scale", scale))
	l.emit("Add", prefix(n)+"/bias", y, nil, m, l.constant(prefix(n)+"_bias", bias))
	return true
}
