package rope

import (
	"slices"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("RotaryEmbedding", kernel) }

// kernel is RotaryEmbedding(X, cos_cache, sin_cache, position_ids):
// for every (b, h, s) with p = position_ids[b, s] and each i < R/2 (R the
// rotary_embedding_dim, 0 = head_dim) it rotates the pair (x1, x2) — the
// elements (2i, 2i+1) when interleaved=1, (i, i+R/2) when interleaved=0 —
// by the angle whose cosine and sine are cos_cache[p, i] and
// sin_cache[p, i]:
//
//	y1 = x1·cos − x2·sin
//	y2 = x2·cos + x1·sin
//
// Elements at index ≥ R are copied unchanged.
func kernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if len(in) < 4 || in[3] == nil {
		return nil, ref.Unsupported("RotaryEmbedding without position_ids")
	}
	if err := ref.Need(in, 0, 1, 2, 3); err != nil {
		return nil, err
	}
	x, cosT, sinT, pos := in[0], in[1], in[2], in[3]
	if !x.DType.IsFloat() {
		return nil, ref.Unsupported("RotaryEmbedding on %v (want a float type)", x.DType)
	}
	if cosT.DType != x.DType || sinT.DType != x.DType {
		return nil, ref.Errorf("cos_cache is %v and sin_cache %v, X is %v", cosT.DType, sinT.DType, x.DType)
	}
	if pos.DType != ir.Int64 {
		return nil, ref.Errorf("position_ids is %v, want i64", pos.DType)
	}
	if len(x.Shape) != 4 {
		return nil, ref.Unsupported("RotaryEmbedding on rank-%d X (only 4-D [batch, heads, seq, head_dim])", len(x.Shape))
	}
	B, H, S, D := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	R := n.AttrInt("rotary_embedding_dim", 0)
	if R == 0 {
		R = D
	}
	if R < 0 || R > D || R%2 != 0 {
		return nil, ref.Errorf("rotary_embedding_dim %d must be even and within head_dim %d", R, D)
	}
	half := R / 2
	if len(pos.Shape) != 2 || pos.Shape[0] != B || pos.Shape[1] != S {
		return nil, ref.Errorf("position_ids has shape %v, want [%d %d]", pos.Shape, B, S)
	}
	if len(cosT.Shape) != 2 || cosT.Shape[1] != half || !slices.Equal(cosT.Shape, sinT.Shape) {
		return nil, ref.Errorf("cos_cache %v and sin_cache %v must both be [max_position, %d]", cosT.Shape, sinT.Shape, half)
	}
	maxPos := cosT.Shape[0]
	inter := n.AttrInt("interleaved", 0)
	if inter != 0 && inter != 1 {
		return nil, ref.Errorf("interleaved is %d, want 0 or 1", inter)
	}
	y := ir.NewTensor(x.DType, x.Shape)
	copy(y.Data, x.Data)
	for b := int64(0); b < B; b++ {
		for s := int64(0); s < S; s++ {
			p := pos.Int64(int(b*S + s))
			if p < 0 || p >= maxPos {
				return nil, ref.Errorf("position_ids[%d, %d] = %d is outside the caches' %d positions", b, s, p, maxPos)
			}
			for h := int64(0); h < H; h++ {
				base := ((b*H+h)*S + s) * D
				for i := int64(0); i < half; i++ {
					c, sn := cosT.Float64(int(p*half+i)), sinT.Float64(int(p*half+i))
					i1, i2 := base+i, base+i+half
					if inter == 1 {
						i1, i2 = base+2*i, base+2*i+1
					}
					x1, x2 := x.Float64(int(i1)), x.Float64(int(i2))
					y.SetFloat64(int(i1), x1*c-x2*sn)
					y.SetFloat64(int(i2), x2*c+x1*sn)
				}
			}
		}
	}
	return []*ir.Tensor{y}, nil
}
