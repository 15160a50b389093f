package kvcache

import (
	"encoding/binary"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

func init() {
	ref.Register("KVCacheUpdate", update)
	ref.Register("KVAttention", attention)
	ref.Register("QGather", qgather)
}

// qgather is QGather(Table, Indices): the rows Indices names of a table
// [V, D] kept in a decodable format, decoded to f32.
func qgather(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1); err != nil {
		return nil, err
	}
	t, idx := in[0], in[1]
	if t.DType == ir.Float32 || !quant.Decodable(t.DType) {
		return nil, ref.Unsupported("QGather of a %v table (want a block format, f16 or bf16)", t.DType)
	}
	if len(t.Shape) != 2 || idx.DType != ir.Int64 {
		return nil, ref.Errorf("Table is %v[%v] and Indices %v, want a [rows, dim] table and i64 indices", t.DType, t.Shape, idx.DType)
	}
	V, D := t.Shape[0], t.Shape[1]
	rb := int(t.DType.Bytes(D))
	if rb < 0 || int64(len(t.Data)) != V*int64(rb) {
		return nil, ref.Errorf("Table %v[%v] has %d bytes, want %d rows of %d", t.DType, t.Shape, len(t.Data), V, rb)
	}
	y := ir.NewTensor(ir.Float32, append(append([]int64{}, idx.Shape...), D))
	ys := y.Float32s()
	for i, r := range idx.Int64s() {
		if r < 0 || r >= V {
			return nil, ref.Errorf("index %d (element %d of Indices) is outside the table's %d rows", r, i, V)
		}
		if err := quant.DecodeRow(t.DType, ys[int64(i)*D:int64(i+1)*D], t.Data[int(r)*rb:int(r+1)*rb]); err != nil {
			return nil, err
		}
	}
	return []*ir.Tensor{y}, nil
}

// checkCache verifies a cache tensor: rank 4 and f32, f16 or Q8_0 (whole
// blocks per row).
func checkCache(name string, t *ir.Tensor) error {
	if len(t.Shape) != 4 {
		return ref.Errorf("%s has rank %d, want 4 ([batch, kv heads, capacity, head_dim])", name, len(t.Shape))
	}
	switch t.DType {
	case ir.Float32, ir.Float16:
	case ir.Q8_0:
		if t.Shape[3]%int64(ir.Q8_0.BlockSize()) != 0 {
			return ref.Unsupported("%s is q8_0 with head size %d (want a multiple of %d)", name, t.Shape[3], ir.Q8_0.BlockSize())
		}
	default:
		return ref.Unsupported("%s is %v (want f32, f16 or q8_0)", name, t.DType)
	}
	return nil
}

// rowBytes is the bytes of one cache row of d elements.
func rowBytes(dt ir.DType, d int64) int { return int(dt.Bytes(d)) }

// positions checks Positions [B, S] i64 against the capacity and returns it.
func positions(t *ir.Tensor, B, S, P int64) ([]int64, error) {
	if t.DType != ir.Int64 || len(t.Shape) != 2 || t.Shape[0] != B || t.Shape[1] != S {
		return nil, ref.Errorf("Positions is %v[%v], want i64[%d %d]", t.DType, t.Shape, B, S)
	}
	ps := t.Int64s()
	for i, p := range ps {
		if p < 0 || p >= P {
			return nil, ref.Errorf("position %d (Positions[%d, %d]) is outside the cache of %d", p, int64(i)/S, int64(i)%S, P)
		}
	}
	return ps, nil
}

// update is KVCacheUpdate(Cache, New, Positions): row s of New goes to
// slot Positions[b, s] of Cache, for every kv head, stored in Cache's
// dtype. It writes Cache in place and returns it.
func update(_ *ref.Context, _ *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1, 2); err != nil {
		return nil, err
	}
	c, nw := in[0], in[1]
	if err := checkCache("Cache", c); err != nil {
		return nil, err
	}
	if nw.DType != ir.Float32 || len(nw.Shape) != 4 {
		return nil, ref.Errorf("New is %v[%v], want f32 of rank 4", nw.DType, nw.Shape)
	}
	B, H, P, D := c.Shape[0], c.Shape[1], c.Shape[2], c.Shape[3]
	S := nw.Shape[2]
	if nw.Shape[0] != B || nw.Shape[1] != H || nw.Shape[3] != D {
		return nil, ref.Errorf("New is [%v], want [%d %d seq %d] for Cache [%v]", nw.Shape, B, H, D, c.Shape)
	}
	ps, err := positions(in[2], B, S, P)
	if err != nil {
		return nil, err
	}
	src := nw.Float32s()
	rb := rowBytes(c.DType, D)
	for b := int64(0); b < B; b++ {
		for s := int64(0); s < S; s++ {
			p := ps[b*S+s]
			for h := int64(0); h < H; h++ {
				x := src[((b*H+h)*S+s)*D : ((b*H+h)*S+s+1)*D]
				at := int((b*H+h)*P+p) * rb
				if err := storeRow(c.DType, c.Data[at:at+rb], x); err != nil {
					return nil, err
				}
			}
		}
	}
	return []*ir.Tensor{c}, nil
}

// storeRow writes x into one cache row of dtype dt.
func storeRow(dt ir.DType, dst []byte, x []float32) error {
	switch dt {
	case ir.Float32:
		for i, v := range x {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case ir.Float16:
		for i, v := range x {
			binary.LittleEndian.PutUint16(dst[2*i:], ir.F32ToF16(v))
		}
	default:
		return quant.QuantizeRow(dt, dst, x)
	}
	return nil
}

// loadRow decodes one cache row of dtype dt into dst.
func loadRow(dt ir.DType, dst []float32, src []byte) error {
	switch dt {
	case ir.Float32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case ir.Float16:
		for i := range dst {
			dst[i] = ir.F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	default:
		return quant.DequantizeRow(dt, dst, src)
	}
	return nil
}

// attention is KVAttention(Q, KCache, VCache, Positions): query s of head
// h attends over the slots j ≤ Positions[b, s] of kv head h / (H/Hkv),
// softmax(Q·Kᵀ·scale)·V in float64.
func attention(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0, 1, 2, 3); err != nil {
		return nil, err
	}
	q, k, v := in[0], in[1], in[2]
	if q.DType != ir.Float32 || len(q.Shape) != 4 {
		return nil, ref.Errorf("Q is %v[%v], want f32 of rank 4", q.DType, q.Shape)
	}
	if err := checkCache("KCache", k); err != nil {
		return nil, err
	}
	if err := checkCache("VCache", v); err != nil {
		return nil, err
	}
	B, H, S, D := q.Shape[0], q.Shape[1], q.Shape[2], q.Shape[3]
	Hkv, P, Dv := k.Shape[1], k.Shape[2], v.Shape[3]
	if k.DType != v.DType || k.Shape[0] != B || k.Shape[3] != D || v.Shape[0] != B || v.Shape[1] != Hkv || v.Shape[2] != P {
		return nil, ref.Errorf("KCache %v[%v] and VCache %v[%v] do not fit Q [%v]", k.DType, k.Shape, v.DType, v.Shape, q.Shape)
	}
	if Hkv == 0 || H%Hkv != 0 {
		return nil, ref.Errorf("Q has %d heads, not a multiple of the %d kv heads", H, Hkv)
	}
	ps, err := positions(in[3], B, S, P)
	if err != nil {
		return nil, err
	}
	scale := 1 / math.Sqrt(float64(D))
	if n.Has("scale") {
		scale = float64(n.AttrFloat("scale", 0))
	}
	qs := q.Float32s()
	y := ir.NewTensor(ir.Float32, []int64{B, H, S, Dv})
	ys := y.Float32s()
	kr, vr := make([]float32, D), make([]float32, Dv)
	krb, vrb := rowBytes(k.DType, D), rowBytes(v.DType, Dv)
	scores := make([]float64, P)
	acc := make([]float64, Dv)
	for b := int64(0); b < B; b++ {
		for h := int64(0); h < H; h++ {
			kvh := b*Hkv + h/(H/Hkv)
			for s := int64(0); s < S; s++ {
				row := (b*H+h)*S + s
				qi := qs[row*D : (row+1)*D]
				p := ps[b*S+s]
				mx := math.Inf(-1)
				for j := int64(0); j <= p; j++ {
					at := int(kvh*P+j) * krb
					if err := loadRow(k.DType, kr, k.Data[at:at+krb]); err != nil {
						return nil, err
					}
					dot := 0.0
					for i, x := range qi {
						dot += float64(x) * float64(kr[i])
					}
					scores[j] = dot * scale
					mx = math.Max(mx, scores[j])
				}
				sum := 0.0
				clear(acc)
				for j := int64(0); j <= p; j++ {
					w := math.Exp(scores[j] - mx)
					sum += w
					at := int(kvh*P+j) * vrb
					if err := loadRow(v.DType, vr, v.Data[at:at+vrb]); err != nil {
						return nil, err
					}
					for i, x := range vr {
						acc[i] += w * float64(x)
					}
				}
				out := ys[row*Dv : (row+1)*Dv]
				for i := range out {
					out[i] = float32(acc[i] / sum)
				}
			}
		}
	}
	return []*ir.Tensor{y}, nil
}
