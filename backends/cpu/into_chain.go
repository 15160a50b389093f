package cpu

import (
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { registerInto(buildChain, "Fused") }

// Limits of the chain interpreter: registers and inputs live in stack
// arrays so that a run allocates nothing.
const (
	maxChainRegs = 64
	maxChainIn   = 16
)

// Chain instruction codes.
const (
	ciUnary = iota
	ciAdd
	ciSub
	ciMul
	ciDiv
	ciPow
	ciMax
	ciMin
	ciEq
	ciLt
	ciGt
	ciLe
	ciGe
	ciAnd
	ciOr
	ciXor
	ciNot
	ciWhere
	ciClip
	ciToBool
	ciIdentity
)

var chainBinary = map[string]int{
	"Add": ciAdd, "Sub": ciSub, "Mul": ciMul, "Div": ciDiv, "Pow": ciPow, "Max": ciMax, "Min": ciMin,
	"Equal": ciEq, "Less": ciLt, "Greater": ciGt, "LessOrEqual": ciLe, "GreaterOrEqual": ciGe,
	"And": ciAnd, "Or": ciOr, "Xor": ciXor,
}

// cinstr is one body node: dst = op(a, b, c) on float64 registers (bools
// are 0 and 1); an f32 result is rounded to float32, as the reference
// rounds every intermediate tensor.
type cinstr struct {
	op         int
	dst        int
	a, b, c    int // -1: absent
	f          func(float64) float64
	roundF32   bool
	noLo, noHi bool // Clip: min absent (−∞), max absent (+∞)
}

// buildChain handles Fused nodes whose body is a chain of float32/bool
// elementwise ops over inputs that broadcast to the output: an interpreter
// evaluates the body once per output element, in registers.
func buildChain(s *nodeSpec) intoKernel {
	body := s.n.AttrGraph("body")
	if body == nil || len(s.out) != 1 || len(body.Outputs) != 1 || len(body.Inputs) != len(s.in) || len(s.in) > maxChainIn || len(body.OuterRefs()) > 0 {
		return nil
	}
	y := s.out[0]
	if y.dt != ir.Float32 && y.dt != ir.Bool || len(y.shape) == 0 {
		return nil
	}
	okType := func(dt ir.DType) bool { return dt == ir.Float32 || dt == ir.Bool }
	fitsOut := func(shape []int64) bool {
		b, err := ref.BroadcastShapes(shape, y.shape)
		return err == nil && sameShape(b, y.shape)
	}
	reg := map[*ir.Value]int{}
	var init []float64
	newReg := func(v *ir.Value) int {
		reg[v] = len(init)
		init = append(init, 0)
		return reg[v]
	}
	inSt := make([][]int64, len(s.in))
	for i, a := range s.in {
		bv := body.Inputs[i]
		if !a.ok || !okType(a.dt) || bv.DType != a.dt || !fitsOut(a.shape) {
			return nil
		}
		newReg(bv)
		inSt[i] = ref.BroadcastStrides(a.shape, y.shape)
	}
	for _, c := range body.Consts {
		if !okType(c.Const.DType) || c.Const.Len() != 1 {
			return nil
		}
		init[newReg(c)] = c.Const.Float64(0)
	}
	var prog []cinstr
	for _, n := range body.Nodes {
		if len(n.Outputs) != 1 || !okType(n.Outputs[0].DType) || !n.Outputs[0].Shape.Static() || !fitsOut(n.Outputs[0].Shape.Ints()) {
			return nil
		}
		in := make([]int, 3)
		for k := range in {
			in[k] = -1
		}
		if len(n.Inputs) > 3 {
			return nil
		}
		for k, v := range n.Inputs {
			if v == nil {
				continue
			}
			r, ok := reg[v]
			if !ok || !okType(v.DType) {
				return nil
			}
			in[k] = r
		}
		ins := cinstr{a: in[0], b: in[1], c: in[2], roundF32: n.Outputs[0].DType == ir.Float32}
		need := func(k int) bool { return len(n.Inputs) == k }
		switch op, isBin := chainBinary[n.Op]; {
		case isBin:
			if !need(2) || ins.a < 0 || ins.b < 0 {
				return nil
			}
			ins.op = op
		case n.Op == "Where":
			if !need(3) || ins.a < 0 || ins.b < 0 || ins.c < 0 {
				return nil
			}
			ins.op = ciWhere
		case n.Op == "Not":
			if !need(1) {
				return nil
			}
			ins.op = ciNot
		case n.Op == "Clip":
			ins.op, ins.noLo, ins.noHi = ciClip, ins.b < 0, ins.c < 0
			for _, v := range n.Inputs[1:] {
				if v != nil && (v.Shape.NumElements() != 1 || v.DType != n.Inputs[0].DType) {
					return nil
				}
			}
		case n.Op == "Cast" || n.Op == "Identity":
			ins.op = ciIdentity
			if n.Outputs[0].DType == ir.Bool {
				ins.op = ciToBool
			}
		default:
			f := unaryFunc(n)
			if f == nil {
				return nil
			}
			ins.op, ins.f = ciUnary, f
		}
		if ins.a < 0 || !chainTypesOK(ins.op, n) {
			return nil
		}
		ins.dst = newReg(n.Outputs[0])
		prog = append(prog, ins)
	}
	outReg, ok := reg[body.Outputs[0]]
	if !ok || body.Outputs[0].DType != y.dt || len(init) > maxChainRegs {
		return nil
	}
	rank := len(y.shape)
	inner, outer := int(y.shape[rank-1]), y.shape[:rank-1]
	rows := numel(outer)
	nIn := len(s.in)
	isBool := make([]bool, nIn)
	for i, a := range s.in {
		isBool[i] = a.dt == ir.Bool
	}
	outBool := y.dt == ir.Bool
	return func(in, out []*ir.Tensor, scratch []byte) error {
		var regs [maxChainRegs]float64
		copy(regs[:], init)
		var fs [maxChainIn][]float32
		var bs [maxChainIn][]byte
		var offs [maxChainIn]int
		for i := 0; i < nIn; i++ {
			if isBool[i] {
				bs[i] = in[i].Data
			} else {
				fs[i] = in[i].Float32s()
			}
		}
		var yf []float32
		if !outBool {
			yf = out[0].Float32s()
		}
		yb := out[0].Data
		for r := 0; r < rows; r++ {
			for i := 0; i < nIn; i++ {
				off, rem := 0, r
				for d := len(outer) - 1; d >= 0; d-- {
					n := int(outer[d])
					off += (rem % n) * int(inSt[i][d])
					rem /= n
				}
				offs[i] = off
			}
			for j := 0; j < inner; j++ {
				o := r*inner + j
				for i := 0; i < nIn; i++ {
					at := offs[i] + j*int(inSt[i][rank-1])
					if isBool[i] {
						regs[i] = b2f(bs[i][at] != 0)
					} else {
						regs[i] = float64(fs[i][at])
					}
				}
				runChain(prog, &regs)
				if outBool {
					yb[o] = byte(int(regs[outReg]) & 1)
				} else {
					yf[o] = float32(regs[outReg])
				}
			}
		}
		return nil
	}
}

// chainTypesOK reports whether n's operand dtypes suit instruction op:
// logic on bools, arithmetic on float32, Where/Equal/Cast on either.
func chainTypesOK(op int, n *ir.Node) bool {
	want := ir.Float32
	switch op {
	case ciIdentity, ciToBool, ciEq:
		return true
	case ciWhere:
		return n.Inputs[0].DType == ir.Bool && n.Inputs[1].DType == n.Outputs[0].DType && n.Inputs[2].DType == n.Outputs[0].DType
	case ciAnd, ciOr, ciXor, ciNot:
		want = ir.Bool
	}
	for _, v := range n.Inputs {
		if v != nil && v.DType != want {
			return false
		}
	}
	return true
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// runChain executes one element's program.
func runChain(prog []cinstr, r *[maxChainRegs]float64) {
	for i := range prog {
		p := &prog[i]
		a := r[p.a]
		var v float64
		switch p.op {
		case ciUnary:
			v = p.f(a)
		case ciAdd:
			v = a + r[p.b]
		case ciSub:
			v = a - r[p.b]
		case ciMul:
			v = a * r[p.b]
		case ciDiv:
			v = a / r[p.b]
		case ciPow:
			v = math.Pow(a, r[p.b])
		case ciMax:
			v = max(a, r[p.b])
		case ciMin:
			v = min(a, r[p.b])
		case ciEq:
			v = b2f(a == r[p.b])
		case ciLt:
			v = b2f(a < r[p.b])
		case ciGt:
			v = b2f(a > r[p.b])
		case ciLe:
			v = b2f(a <= r[p.b])
		case ciGe:
			v = b2f(a >= r[p.b])
		case ciAnd:
			v = b2f(a != 0 && r[p.b] != 0)
		case ciOr:
			v = b2f(a != 0 || r[p.b] != 0)
		case ciXor:
			v = b2f((a != 0) != (r[p.b] != 0))
		case ciNot:
			v = b2f(a == 0)
		case ciWhere:
			if a != 0 {
				v = r[p.b]
			} else {
				v = r[p.c]
			}
		case ciClip:
			v = a
			if !p.noLo && v < r[p.b] {
				v = r[p.b]
			}
			if !p.noHi && v > r[p.c] {
				v = r[p.c]
			}
		case ciToBool:
			v = b2f(a != 0)
		case ciIdentity:
			v = a
		}
		if p.roundF32 {
			v = float64(float32(v))
		}
		r[p.dst] = v
	}
}
