package vulkan

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// This file plans the ops of LLM decoding that are not plain f32 linear
// algebra: QMatMul with block-quantized weights dequantized in the shader,
// and RotaryEmbedding.

// qmatmulGroup is qmatmul.comp's workgroup size.
const qmatmulGroup = 64

// qFormats maps the weight formats qmatmul.comp decodes to its fmt code.
var qFormats = map[ir.DType]uint32{ir.Q8_0: 0, ir.Q4_0: 1, ir.Float16: 2, ir.BFloat16: 3}

// planQMatMul plans QMatMul(X, W) with X f32 [..., K] and W [N, K] in Q8_0,
// Q4_0, F16 or BF16 (uploaded as the raw bytes, widened in the shader, the
// sums in f32). F16 weights are read through 16-bit storage where the
// device has it (qmatmul_f16), else as words through unpackHalf2x16, which
// needs no feature. Int8 weights with per-row Scales are declined.
func planQMatMul(n *ir.Node, q Quirks, lim limits) ([]dispatch, error) {
	if err := needIO(n, 2, 3); err != nil {
		return nil, err
	}
	if n.In(2) != nil {
		return nil, unsupported(n, "per-row Scales (Int8 weights)")
	}
	x, w, y := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	code, ok := qFormats[w.DType]
	if !ok {
		return nil, unsupported(n, "weight dtype %v (only q8_0, q4_0, f16 and bf16)", w.DType)
	}
	if !w.Shape.Static() || len(w.Shape) != 2 {
		return nil, unsupported(n, "weight %v is not a static [N, K] matrix", w)
	}
	ws := w.Shape.Ints()
	N, K := ws[0], ws[1]
	if N == 0 || K == 0 || K%int64(w.DType.BlockSize()) != 0 {
		return nil, unsupported(n, "weight %v: K must be a positive multiple of %d", w, w.DType.BlockSize())
	}
	if w.IsConst() && w.Const != nil && int64(len(w.Const.Data)) != w.DType.Bytes(N*K) {
		return nil, fmt.Errorf("vulkan: %v: weight %v has %d bytes, want %d", n, w, len(w.Const.Data), w.DType.Bytes(N*K))
	}
	if wb := uint64(w.DType.Bytes(N*K)) + 3; wb > lim.maxStorageRange {
		return nil, unsupported(n, "weight %v is larger than one storage buffer binding (%d bytes)", w, lim.maxStorageRange)
	}
	xs := x.Shape.Ints()
	if len(xs) == 0 || xs[len(xs)-1] != K {
		return nil, fmt.Errorf("vulkan: %v: X %v does not end in K = %d", n, x.Shape, K)
	}
	M := ir.NumElements(xs[:len(xs)-1])
	if y.Shape.NumElements() != M*N {
		return nil, fmt.Errorf("vulkan: %v: output %v is not %d rows × %d", n, y.Shape, M, N)
	}
	if M*N > math.MaxUint32 || M*K > math.MaxUint32 {
		return nil, unsupported(n, "%d × %d × %d is too large", M, N, K)
	}
	g, err := groups1D(n, uint64(M*N+qmatmulGroup-1)/qmatmulGroup, lim)
	if err != nil {
		return nil, err
	}
	push := []uint32{uint32(M), uint32(N), uint32(K), code}
	shader := "qmatmul"
	if w.DType == ir.Float16 && q.F16Storage {
		shader = "qmatmul_f16"
	}
	return []dispatch{{shader: shader, args: []*ir.Value{x, w, y}, push: push, groups: g}}, nil
}

// planRope plans RotaryEmbedding(X, CosCache, SinCache, PositionIds) in
// the op contract's form: X f32 [B, H, S, D], caches [max_pos, R/2],
// PositionIds i64 [B, S], checked to lie in [0, max_pos) on the host.
func planRope(n *ir.Node, lim limits) ([]dispatch, error) {
	if err := needIO(n, 4, 4); err != nil {
		return nil, err
	}
	x, cs, sn, pos, y := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Inputs[3], n.Outputs[0]
	if pos.DType != ir.Int64 || !pos.Shape.Static() {
		return nil, unsupported(n, "position_ids %v (want static i64)", pos)
	}
	xs := x.Shape.Ints()
	if len(xs) != 4 {
		return nil, unsupported(n, "rank-%d X (only 4-D [batch, heads, seq, head_dim])", len(xs))
	}
	B, H, S, D := xs[0], xs[1], xs[2], xs[3]
	R := n.AttrInt("rotary_embedding_dim", 0)
	if R == 0 {
		R = D
	}
	if R < 0 || R > D || R%2 != 0 {
		return nil, fmt.Errorf("vulkan: %v: rotary_embedding_dim %d must be even and within head_dim %d", n, R, D)
	}
	inter := n.AttrInt("interleaved", 0)
	if inter != 0 && inter != 1 {
		return nil, fmt.Errorf("vulkan: %v: interleaved is %d, want 0 or 1", n, inter)
	}
	ps, cshape := pos.Shape.Ints(), cs.Shape.Ints()
	if len(ps) != 2 || ps[0] != B || ps[1] != S {
		return nil, fmt.Errorf("vulkan: %v: position_ids %v, want [%d %d]", n, pos.Shape, B, S)
	}
	if len(cshape) != 2 || cshape[1] != R/2 || !sn.Shape.Equal(cs.Shape) {
		return nil, fmt.Errorf("vulkan: %v: cos_cache %v and sin_cache %v must both be [max_position, %d]", n, cs.Shape, sn.Shape, R/2)
	}
	maxPos := cshape[0]
	if maxPos > math.MaxInt32 {
		return nil, unsupported(n, "caches of %d positions", maxPos)
	}
	if pos.IsConst() && pos.Const != nil {
		if err := checkPositions(n, pos.Const, maxPos); err != nil {
			return nil, err
		}
	}
	total := uint64(B * H * S * D)
	g, err := groups1D(n, (total+elemGroup-1)/elemGroup, lim)
	if err != nil {
		return nil, err
	}
	push := []uint32{uint32(total), uint32(H), uint32(S), uint32(D), uint32(R), uint32(inter)}
	return []dispatch{{shader: "rope", args: []*ir.Value{x, cs, sn, pos, y}, push: push, groups: g,
		index: pos, bound: maxPos, nonNeg: true}}, nil
}

// checkPositions reports a position outside [0, bound).
func checkPositions(n *ir.Node, t *ir.Tensor, bound int64) error {
	for k := 0; k < t.Len(); k++ {
		if v := t.Int64(k); v < 0 || v >= bound {
			return fmt.Errorf("vulkan: %v: position %d at index %d is outside the caches' %d positions", n, v, k, bound)
		}
	}
	return nil
}
