package passes

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// weft's own core ops (see ir/ops.go): the fused ops the fusion and pattern
// passes introduce, and the quantized matmul.

func init() {
	register(inferFusedMatMul, "FusedMatMul")
	register(inferFusedConv, "FusedConv")
	register(inferRMSNorm, "RMSNormalization")
	register(same, "SiLU")
	register(inferAttention, "Attention")
	register(inferFused, "Fused")
	register(inferQMatMul, "QMatMul")
}

// weftSameDTypes reports an error when two known dtypes of n's inputs differ.
func weftSameDTypes(n *ir.Node, names []string, idx ...int) error {
	first := in(n, idx[0]).dt
	for k, i := range idx[1:] {
		if dt := in(n, i).dt; dt.Valid() && first.Valid() && dt != first {
			return fmt.Errorf("%s %s is %v, %s is %v", n.Op, names[k+1], dt, names[0], first)
		}
	}
	return nil
}

// inferFusedMatMul: act(MatMul(A, B) + Bias), Bias broadcasting (numpy rules).
func inferFusedMatMul(_ *state, n *ir.Node) ([]typ, error) {
	if err := weftSameDTypes(n, []string{"A", "B", "Bias"}, 0, 1, 2); err != nil {
		return nil, err
	}
	sh, err := matmulShape(in(n, 0).sh, in(n, 1).sh)
	if err != nil {
		return nil, err
	}
	if n.In(2) != nil {
		if sh, err = broadcastShapes(sh, in(n, 2).sh); err != nil {
			return nil, fmt.Errorf("FusedMatMul Bias: %w", err)
		}
	}
	return []typ{{in(n, 0).dt, sh}}, nil
}

// inferFusedConv: Conv's output; the residual Z has that very shape, so its
// known dims refine the result.
func inferFusedConv(s *state, n *ir.Node) ([]typ, error) {
	if err := weftSameDTypes(n, []string{"X", "W", "B", "Z"}, 0, 1, 2, 3); err != nil {
		return nil, err
	}
	out, err := convOp(s, n)
	if err != nil || n.In(3) == nil {
		return out, err
	}
	y, z := out[0].sh, in(n, 3).sh
	switch {
	case z == nil:
		return out, nil
	case y == nil:
		out[0].sh = z.Clone()
		return out, nil
	case len(z) != len(y):
		return nil, fmt.Errorf("FusedConv residual Z has rank %d, the convolution output [%v] rank %d", len(z), y, len(y))
	}
	for i := range y {
		d, err := unifyDim(y[i], z[i])
		if err != nil {
			return nil, fmt.Errorf("FusedConv residual Z [%v] against the convolution output [%v]: %w", z, y, err)
		}
		y[i] = d
	}
	return out, nil
}

// inferRMSNorm: Y has X's type; Scale broadcasts to X.
func inferRMSNorm(_ *state, n *ir.Node) ([]typ, error) {
	if err := weftSameDTypes(n, []string{"X", "Scale"}, 0, 1); err != nil {
		return nil, err
	}
	x, scale := in(n, 0), in(n, 1)
	if x.sh == nil {
		return []typ{x}, nil
	}
	if _, err := normAxis(n.AttrInt("axis", -1), len(x.sh)); err != nil {
		return nil, fmt.Errorf("RMSNormalization: %w", err)
	}
	if err := weftBroadcastsTo(scale.sh, x.sh); err != nil {
		return nil, fmt.Errorf("RMSNormalization Scale: %w", err)
	}
	return []typ{x}, nil
}

// weftBroadcastsTo reports an error when p provably cannot broadcast
// (unidirectionally) to to.
func weftBroadcastsTo(p, to ir.Shape) error {
	if p == nil || to == nil {
		return nil
	}
	if len(p) > len(to) {
		return fmt.Errorf("shape [%v] has a higher rank than [%v]", p, to)
	}
	off := len(to) - len(p)
	for i, d := range p {
		if d.Known() && d.Size == 1 {
			continue
		}
		if _, err := unifyDim(d, to[off+i]); err != nil {
			return fmt.Errorf("shape [%v] does not broadcast to [%v]: %w", p, to, err)
		}
	}
	return nil
}

// inferAttention: Q [B, H, Sq, D], K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv]
// give Y [B, H, Sq, Dv]; H is a multiple of Hkv and Mask broadcasts to
// [B, H, Sq, Skv].
func inferAttention(_ *state, n *ir.Node) ([]typ, error) {
	if err := weftSameDTypes(n, []string{"Q", "K", "V"}, 0, 1, 2); err != nil {
		return nil, err
	}
	if m := in(n, 3).dt; m.Valid() && !m.IsFloat() && m != ir.Bool {
		return nil, fmt.Errorf("Attention Mask is %v, want a float type or bool", m)
	}
	names := []string{"Q", "K", "V"}
	var sh [3]ir.Shape
	for i := range sh {
		sh[i] = in(n, i).sh
		if sh[i] == nil {
			sh[i] = unknownShape(4)
		} else if len(sh[i]) != 4 {
			return nil, fmt.Errorf("Attention %s has rank %d, want 4 ([batch, heads, seq, head_dim])", names[i], len(sh[i]))
		}
	}
	q, k, v := sh[0], sh[1], sh[2]
	unify := func(what string, ds ...ir.Dim) (ir.Dim, error) {
		d := ds[0]
		for _, e := range ds[1:] {
			var err error
			if d, err = unifyDim(d, e); err != nil {
				return unk, fmt.Errorf("Attention %s (Q [%v], K [%v], V [%v]): %w", what, q, k, v, err)
			}
		}
		return d, nil
	}
	batch, err := unify("batch", q[0], k[0], v[0])
	if err != nil {
		return nil, err
	}
	if _, err := unify("head size of Q and K", q[3], k[3]); err != nil {
		return nil, err
	}
	hkv, err := unify("kv heads of K and V", k[1], v[1])
	if err != nil {
		return nil, err
	}
	skv, err := unify("kv length of K and V", k[2], v[2])
	if err != nil {
		return nil, err
	}
	if h := q[1]; h.Known() && hkv.Known() && (hkv.Size == 0 && h.Size != 0 || hkv.Size != 0 && h.Size%hkv.Size != 0) {
		return nil, fmt.Errorf("Attention Q has %d heads, not a multiple of the %d kv heads", h.Size, hkv.Size)
	}
	if err := weftBroadcastsTo(in(n, 3).sh, ir.Shape{batch, q[1], q[2], skv}); err != nil {
		return nil, fmt.Errorf("Attention Mask: %w", err)
	}
	return []typ{{in(n, 0).dt, ir.Shape{batch, q[1], q[2], v[3]}}}, nil
}

// inferFused infers the body with its inputs bound to the node's inputs; the
// node's outputs are the body's.
func inferFused(s *state, n *ir.Node) ([]typ, error) {
	body := n.AttrGraph("body")
	if body == nil {
		return nil, fmt.Errorf("Fused without a body graph")
	}
	if len(body.Outputs) != len(n.Outputs) {
		return nil, fmt.Errorf("Fused body %q has %d outputs, the node %d", body.Name, len(body.Outputs), len(n.Outputs))
	}
	bind := make([]typ, len(n.Inputs))
	for i := range bind {
		bind[i] = in(n, i)
	}
	if err := s.inferBody(body, bind, nil); err != nil {
		return nil, err
	}
	out := make([]typ, len(n.Outputs))
	for i, o := range body.Outputs {
		out[i] = valueType(o)
	}
	return out, nil
}

// inferQMatMul: Y[..., n] = Σ_k X[..., k]·W[n, k]: X's shape with the last dim
// replaced by N, X's dtype; W is [N, K] (block-quantized, i8, f16 or bf16)
// and Scales, when present, [N] (only an i8 weight takes Scales).
func inferQMatMul(_ *state, n *ir.Node) ([]typ, error) {
	x, w, scales := in(n, 0), in(n, 1), in(n, 2)
	if (w.dt == ir.Float16 || w.dt == ir.BFloat16) && n.In(2) != nil {
		return nil, fmt.Errorf("QMatMul has Scales with a %v weight (only an i8 weight takes Scales)", w.dt)
	}
	var nd, kd ir.Dim = unk, unk
	if w.sh != nil {
		if len(w.sh) != 2 {
			return nil, fmt.Errorf("QMatMul weight has shape [%v], want [N, K]", w.sh)
		}
		nd, kd = w.sh[0], w.sh[1]
	}
	if scales.sh != nil {
		if len(scales.sh) != 1 {
			return nil, fmt.Errorf("QMatMul Scales has shape [%v], want [N]", scales.sh)
		}
		var err error
		if nd, err = unifyDim(nd, scales.sh[0]); err != nil {
			return nil, fmt.Errorf("QMatMul Scales [%v] against weight [%v]: %w", scales.sh, w.sh, err)
		}
	}
	if x.sh == nil {
		return []typ{{x.dt, nil}}, nil
	}
	if len(x.sh) == 0 {
		return nil, fmt.Errorf("QMatMul input is a scalar, want [..., K]")
	}
	if _, err := unifyDim(x.sh[len(x.sh)-1], kd); err != nil {
		return nil, fmt.Errorf("QMatMul input [%v] against weight [%v]: inner %w", x.sh, w.sh, err)
	}
	out := x.sh.Clone()
	out[len(out)-1] = nd
	return []typ{{x.dt, out}}, nil
}
