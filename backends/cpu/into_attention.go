package cpu

import (
	"math"
	"slices"

	"github.com/weftrt/weft/ir"
)

func init() { registerInto(buildAttention, "Attention") }

// maxAttnHead bounds Dv so that the accumulator of one query row fits in a
// stack array.
const maxAttnHead = 512

// buildAttention handles float32 Attention (see ir/ops.go) with an optional
// float32 (additive) or bool (keep) mask and is_causal. Each query row runs
// an online softmax: scores are visited once, the running maximum rescales
// the float64 accumulator, so no score row is stored. A row that sees no
// key is NaN, as in the reference.
func buildAttention(s *nodeSpec) intoKernel {
	q, k, v, mask, y := s.input(0), s.input(1), s.input(2), s.input(3), s.out[0]
	if len(s.in) > 4 || len(s.out) != 1 || !q.ok || !k.ok || !v.ok || !allF32(q, k, v, y) {
		return nil
	}
	if len(q.shape) != 4 || len(k.shape) != 4 || len(v.shape) != 4 {
		return nil
	}
	B, H, Sq, D := int(q.shape[0]), int(q.shape[1]), int(q.shape[2]), int(q.shape[3])
	Hkv, Skv, Dv := int(k.shape[1]), int(k.shape[2]), int(v.shape[3])
	if int(k.shape[0]) != B || int(v.shape[0]) != B || int(k.shape[3]) != D || int(v.shape[1]) != Hkv || int(v.shape[2]) != Skv ||
		Hkv == 0 || H%Hkv != 0 || Dv > maxAttnHead || !slices.Equal(y.shape, []int64{int64(B), int64(H), int64(Sq), int64(Dv)}) {
		return nil
	}
	var mst [4]int // mask strides over [B, H, Sq, Skv]
	boolMask := false
	if mask.ok {
		if mask.dt != ir.Float32 && mask.dt != ir.Bool || len(mask.shape) > 4 {
			return nil
		}
		boolMask = mask.dt == ir.Bool
		full := []int64{int64(B), int64(H), int64(Sq), int64(Skv)}
		off := 4 - len(mask.shape)
		st := rowStrides(mask.shape)
		for i, d := range mask.shape {
			switch {
			case d == full[off+i]:
				mst[off+i] = int(st[i])
			case d != 1:
				return nil
			}
		}
	}
	scale := 1 / math.Sqrt(float64(D))
	if s.n.Has("scale") {
		scale = float64(s.n.AttrFloat("scale", 0))
	}
	causal := s.n.AttrInt("is_causal", 0) != 0
	group := H / Hkv
	hasMask := mask.ok
	return func(in, out []*ir.Tensor, scratch []byte) error {
		qs, ks, vs, ys := in[0].Float32s(), in[1].Float32s(), in[2].Float32s(), out[0].Float32s()
		var mf []float32
		var mb []byte
		if hasMask && boolMask {
			mb = in[3].Data
		} else if hasMask {
			mf = in[3].Float32s()
		}
		var acc [maxAttnHead]float64
		for b := 0; b < B; b++ {
			for h := 0; h < H; h++ {
				kvh := b*Hkv + h/group
				kh := ks[kvh*Skv*D : (kvh+1)*Skv*D]
				vh := vs[kvh*Skv*Dv : (kvh+1)*Skv*Dv]
				for i := 0; i < Sq; i++ {
					row := (b*H+h)*Sq + i
					qi := qs[row*D : (row+1)*D]
					a := acc[:Dv]
					clear(a)
					m, l := math.Inf(-1), 0.0
					for j := 0; j < Skv; j++ {
						if causal && j > i+Skv-Sq {
							break
						}
						kj := kh[j*D : (j+1)*D]
						dot := 0.0
						for d, x := range qi {
							dot += float64(x) * float64(kj[d])
						}
						sc := dot * scale
						if hasMask {
							mi := b*mst[0] + h*mst[1] + i*mst[2] + j*mst[3]
							if boolMask {
								if mb[mi] == 0 {
									continue
								}
							} else {
								sc += float64(mf[mi])
							}
						}
						if math.IsInf(sc, -1) {
							continue // weight exactly 0
						}
						if sc > m {
							c := math.Exp(m - sc)
							l *= c
							for d := range a {
								a[d] *= c
							}
							m = sc
						}
						p := math.Exp(sc - m)
						l += p
						vj := vh[j*Dv : (j+1)*Dv]
						for d, x := range vj {
							a[d] += p * float64(x)
						}
					}
					yi := ys[row*Dv : (row+1)*Dv]
					for d := range yi {
						yi[d] = float32(a[d] / l)
					}
				}
			}
		}
		return nil
	}
}
