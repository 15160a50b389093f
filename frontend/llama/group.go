package llama

import (
	"slices"

	"github.com/weftrt/weft/ir"
)

// groupable reports whether the weights ([N, K] each, K = the input's
// width) of matmuls sharing one input become one QMatMulGroup (ir/ops.go)
// in a graph of seq tokens: all of one type that the CPU backend's group
// kernel has — a block type (Q8_0, Q4_0; Q4_K, Q6_K with K a multiple of
// 256: the activations are quantized once), or F16 / BF16 in a decode
// graph (seq 1: its GEMV) or a verification graph (g.verify: see
// rowExact) — so that one pool batch runs every weight's rows. Other
// cases (f32, mixed types, half-precision prefill) keep one matmul per
// weight, which have their own fast kernels.
func (g *builder) groupable(seq, k int64, ws ...*ir.Tensor) bool {
	return groupable(seq == 1 || g.verify, k, ws...)
}

// rowExact reports whether the matmul of weight w runs as a QMatMulGroup
// of its own: an F16 or BF16 weight in a verification graph (g.verify).
// Speculative decoding verifies k drafted tokens in one run of such a
// graph and needs every row's logits bit for bit as one-token decoding
// computes them; the CPU backend's group kernel runs half weights with
// the dot-product kernels of decode at any number of rows, while its
// QMatMul takes a packed GEMM from 32 rows on, which sums in another
// order. Prefill graphs (Mode.LastLogits) keep QMatMul and its speed:
// no verification runs them. The block types need no such care: QMatMul
// and the group kernel round every row as at one row.
func (g *builder) rowExact(w *ir.Tensor) bool {
	return g.verify && len(w.Shape) == 2 && (w.DType == ir.Float16 || w.DType == ir.BFloat16)
}

// groupable is builder.groupable with half weights allowed or not.
func groupable(half bool, k int64, ws ...*ir.Tensor) bool {
	for _, w := range ws {
		if w == nil || len(w.Shape) != 2 || w.Shape[1] != k || w.DType != ws[0].DType {
			return false
		}
		switch w.DType {
		case ir.Q8_0, ir.Q4_0:
			if k%32 != 0 {
				return false
			}
		case ir.Q4_K, ir.Q6_K:
			if k%256 != 0 {
				return false
			}
		case ir.Float16, ir.BFloat16:
			if !half {
				return false
			}
		default:
			return false
		}
	}
	return len(ws) > 0
}

// sameShape reports whether two weights have one shape.
func sameShape(a, b *ir.Tensor) bool { return slices.Equal(a.Shape, b.Shape) }

// group adds QMatMulGroup(x, ws...) with attribute act ("" or "silu_mul")
// and one named output per name: the matmuls' outputs (act ""), or the
// SwiGLU of the two (act "silu_mul", one name). The weight constants are
// named wnames[i] + ".weight", as the separate matmuls name them.
func (g *builder) group(name, act string, x *ir.Value, outs, wnames []string, ws ...*ir.Tensor) []*ir.Value {
	return g.groupAttrs(name, act, x, outs, wnames, nil, ws...)
}

// groupBias is group with act "" and, where bs is not empty, one bias
// value per weight that the group adds (attribute bias 1): the outputs
// then stand for the Adds, named as they would be.
func (g *builder) groupBias(name string, x *ir.Value, outs, wnames []string, bs []*ir.Value, ws ...*ir.Tensor) []*ir.Value {
	return g.groupAttrs(name, "", x, outs, wnames, bs, ws...)
}

func (g *builder) groupAttrs(name, act string, x *ir.Value, outs, wnames []string, bs []*ir.Value, ws ...*ir.Tensor) []*ir.Value {
	in := []*ir.Value{x}
	for i, w := range ws {
		in = append(in, g.b.Const(wnames[i]+".weight", w))
	}
	var attrs []ir.AttrOption
	if act != "" {
		attrs = append(attrs, ir.Str("act", act))
	}
	if len(bs) > 0 {
		in = append(in, bs...)
		attrs = append(attrs, ir.Int("bias", 1))
	}
	vs := g.b.OpN("QMatMulGroup", len(outs), attrs, in...)
	vs[0].Producer.Name = name
	for i, v := range vs {
		v.Name = outs[i]
	}
	return vs
}
