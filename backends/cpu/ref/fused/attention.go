package fused

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("Attention", attention) }

// attention is scaled dot-product attention on 4-D tensors:
//
//	Q [B, H, Sq, D], K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv]
//	Y [B, H, Sq, Dv] = softmax(Q·Kᵀ·scale + Mask)·V
//
// Query head h reads kv head h / (H/Hkv) (grouped-query attention). Mask is
// optional and broadcasts to [B, H, Sq, Skv]: a float mask is added to the
// scores, a bool mask keeps the scores where it is true (the others become
// -inf). With is_causal, query i sees keys j ≤ i + Skv - Sq. The softmax
// subtracts the row maximum; a row that sees no key at all is NaN, as the
// softmax of a row of -inf is.
func attention(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1, 2); err != nil {
		return nil, err
	}
	if len(n.Outputs) > 1 {
		return nil, ref.Unsupported("Attention with %d outputs", len(n.Outputs))
	}
	q, k, v, mask := in[0], in[1], in[2], opt(in, 3)
	if err := sameFloat(n.Op, []string{"Q", "K", "V"}, []*ir.Tensor{q, k, v}); err != nil {
		return nil, err
	}
	g, err := attnGeometry(q.Shape, k.Shape, v.Shape)
	if err != nil {
		return nil, err
	}
	scoreShape := []int64{int64(g.B), int64(g.H), int64(g.Sq), int64(g.Skv)}
	var maskIdx []int64
	var maskVals []float64
	if mask != nil {
		if !mask.DType.IsFloat() && mask.DType != ir.Bool {
			return nil, fmt.Errorf("Mask is %v, want a float type (additive) or bool (keep)", mask.DType)
		}
		if maskIdx, err = broadcastIndex("Mask", mask.Shape, scoreShape); err != nil {
			return nil, err
		}
		maskVals = toFloats(mask) // bools read as 0/1
	}
	scale := 1 / math.Sqrt(float64(g.D))
	if n.Has("scale") {
		scale = float64(n.AttrFloat("scale", 0))
	}
	causal := n.AttrInt("is_causal", 0) != 0

	qs, ks, vs := toFloats(q), toFloats(k), toFloats(v)
	y := make([]float64, g.B*g.H*g.Sq*g.Dv)
	scores := make([]float64, g.Skv)
	group := 1
	if g.Hkv > 0 {
		group = g.H / g.Hkv
	}
	for b := 0; b < g.B; b++ {
		for h := 0; h < g.H; h++ {
			kvh := b*g.Hkv + h/group
			kh := ks[kvh*g.Skv*g.D : (kvh+1)*g.Skv*g.D]
			vh := vs[kvh*g.Skv*g.Dv : (kvh+1)*g.Skv*g.Dv]
			for i := 0; i < g.Sq; i++ {
				row := ((b*g.H+h)*g.Sq + i)
				qi := qs[row*g.D : (row+1)*g.D]
				for j := range scores {
					kj := kh[j*g.D : (j+1)*g.D]
					dot := 0.0
					for d, qv := range qi {
						dot += qv * kj[d]
					}
					s := dot * scale
					if mask != nil {
						m := maskVals[maskIdx[row*g.Skv+j]]
						switch {
						case mask.DType != ir.Bool:
							s += m
						case m == 0:
							s = math.Inf(-1)
						}
					}
					if causal && j > i+g.Skv-g.Sq {
						s = math.Inf(-1)
					}
					scores[j] = s
				}
				softmax(scores)
				yi := y[row*g.Dv : (row+1)*g.Dv]
				for j, p := range scores {
					vj := vh[j*g.Dv : (j+1)*g.Dv]
					for d, vv := range vj {
						yi[d] += p * vv
					}
				}
			}
		}
	}
	return []*ir.Tensor{fromFloats(q.DType, []int64{int64(g.B), int64(g.H), int64(g.Sq), int64(g.Dv)}, y)}, nil
}

// attnDims are the sizes of an Attention node.
type attnDims struct{ B, H, Hkv, Sq, Skv, D, Dv int }

// attnGeometry checks the shapes of Q, K and V and returns their sizes.
func attnGeometry(q, k, v []int64) (attnDims, error) {
	if len(q) != 4 || len(k) != 4 || len(v) != 4 {
		return attnDims{}, fmt.Errorf("Q, K and V must be 4-D [B, heads, seq, head_dim], got shapes %v, %v and %v", q, k, v)
	}
	g := attnDims{B: int(q[0]), H: int(q[1]), Hkv: int(k[1]), Sq: int(q[2]), Skv: int(k[2]), D: int(q[3]), Dv: int(v[3])}
	switch {
	case k[0] != q[0] || v[0] != q[0]:
		return g, fmt.Errorf("batch sizes differ: Q %v, K %v, V %v", q, k, v)
	case k[3] != q[3]:
		return g, fmt.Errorf("K head size %d differs from Q's %d (Q %v, K %v)", k[3], q[3], q, k)
	case v[1] != k[1] || v[2] != k[2]:
		return g, fmt.Errorf("V %v does not match K %v in kv heads and sequence length", v, k)
	case g.Hkv == 0 && g.H != 0, g.Hkv != 0 && g.H%g.Hkv != 0:
		return g, fmt.Errorf("Q has %d heads, not a multiple of the %d kv heads", g.H, g.Hkv)
	}
	return g, nil
}

// softmax replaces row by its softmax, subtracting the maximum first.
func softmax(row []float64) {
	if len(row) == 0 {
		return
	}
	mx := row[0]
	for _, v := range row[1:] {
		if v > mx {
			mx = v
		}
	}
	sum := 0.0
	for j, v := range row {
		row[j] = math.Exp(v - mx)
		sum += row[j]
	}
	for j := range row {
		row[j] /= sum
	}
}
