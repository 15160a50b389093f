package passes

import (
	"fmt"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/ir/quant"
)

// The KV-cache ops of decoder graphs (see ir/ops.go): KVCacheUpdate writes
// new keys or values into a cache in place, KVAttention attends over a
// cache up to each query's position.

func init() {
	register(inferKVCacheUpdate, "KVCacheUpdate")
	register(inferKVAttention, "KVAttention")
	register(inferQGather, "QGather")
}

// inferQGather: Y is f32 [Indices..., D] from Table [V, D] (a decodable
// format other than f32) and i64 Indices.
func inferQGather(_ *state, n *ir.Node) ([]typ, error) {
	if n.In(1) == nil {
		return nil, fmt.Errorf("QGather needs Table and Indices")
	}
	t, idx := in(n, 0), in(n, 1)
	if t.dt.Valid() && (t.dt == ir.Float32 || !quant.Decodable(t.dt)) {
		return nil, fmt.Errorf("QGather Table is %v: %w (want a block format, f16 or bf16; an f32 table takes Gather)", t.dt, ir.ErrUnsupported)
	}
	if idx.dt.Valid() && idx.dt != ir.Int64 {
		return nil, fmt.Errorf("QGather Indices is %v, want i64", idx.dt)
	}
	if t.sh == nil || idx.sh == nil {
		return []typ{{ir.Float32, nil}}, nil
	}
	if len(t.sh) != 2 {
		return nil, fmt.Errorf("QGather Table has rank %d, want 2 ([rows, dim])", len(t.sh))
	}
	return []typ{{ir.Float32, append(idx.sh.Clone(), t.sh[1])}}, nil
}

// kvCacheType checks a cache dtype (f32, f16, Q8_0) and, for Q8_0, that the
// head size d (when known) is a whole number of blocks.
func kvCacheType(op, name string, dt ir.DType, d ir.Dim) error {
	switch dt {
	case ir.Invalid, ir.Float32, ir.Float16:
	case ir.Q8_0:
		if d.Known() && d.Size%int64(ir.Q8_0.BlockSize()) != 0 {
			return fmt.Errorf("%s %s is q8_0 with head size %d: %w (a q8_0 cache needs a multiple of %d)", op, name, d.Size, ir.ErrUnsupported, ir.Q8_0.BlockSize())
		}
	default:
		return fmt.Errorf("%s %s is %v: %w (want f32, f16 or q8_0)", op, name, dt, ir.ErrUnsupported)
	}
	return nil
}

// kvShapes returns the rank-4 shapes of n's inputs idx (unknown ones as
// four unknown dims) or an error naming the first of another rank.
func kvShapes(n *ir.Node, names []string, idx ...int) ([]ir.Shape, error) {
	out := make([]ir.Shape, len(idx))
	for k, i := range idx {
		sh := in(n, i).sh
		switch {
		case sh == nil:
			sh = unknownShape(4)
		case len(sh) != 4:
			return nil, fmt.Errorf("%s %s has rank %d, want 4 ([batch, heads, seq, head_dim])", n.Op, names[k], len(sh))
		}
		out[k] = sh
	}
	return out, nil
}

// kvPositions checks Positions: i64 [B, S] against the batch and new-token
// count.
func kvPositions(n *ir.Node, i int, b, s ir.Dim) error {
	p := in(n, i)
	if p.dt.Valid() && p.dt != ir.Int64 {
		return fmt.Errorf("%s Positions is %v, want i64", n.Op, p.dt)
	}
	if p.sh == nil {
		return nil
	}
	if len(p.sh) != 2 {
		return fmt.Errorf("%s Positions has rank %d, want 2 ([batch, seq])", n.Op, len(p.sh))
	}
	if _, err := unifyDim(p.sh[0], b); err != nil {
		return fmt.Errorf("%s Positions batch: %w", n.Op, err)
	}
	if _, err := unifyDim(p.sh[1], s); err != nil {
		return fmt.Errorf("%s Positions length against the new tokens: %w", n.Op, err)
	}
	return nil
}

// inferKVCacheUpdate: Cache' has Cache's type; New is f32 [B, Hkv, S, D]
// with Cache's B, Hkv and D.
func inferKVCacheUpdate(_ *state, n *ir.Node) ([]typ, error) {
	if n.In(1) == nil || n.In(2) == nil {
		return nil, fmt.Errorf("KVCacheUpdate needs Cache, New and Positions")
	}
	sh, err := kvShapes(n, []string{"Cache", "New"}, 0, 1)
	if err != nil {
		return nil, err
	}
	c, nw := sh[0], sh[1]
	if err := kvCacheType(n.Op, "Cache", in(n, 0).dt, c[3]); err != nil {
		return nil, err
	}
	if dt := in(n, 1).dt; dt.Valid() && dt != ir.Float32 {
		return nil, fmt.Errorf("KVCacheUpdate New is %v, want f32", dt)
	}
	for i, what := range []string{"batch", "kv heads", "", "head size"} {
		if what == "" {
			continue
		}
		if _, err := unifyDim(c[i], nw[i]); err != nil {
			return nil, fmt.Errorf("KVCacheUpdate %s of Cache [%v] and New [%v]: %w", what, c, nw, err)
		}
	}
	if c[2].Known() && nw[2].Known() && nw[2].Size > c[2].Size {
		return nil, fmt.Errorf("KVCacheUpdate writes %d tokens into a cache of %d", nw[2].Size, c[2].Size)
	}
	if err := kvPositions(n, 2, c[0], nw[2]); err != nil {
		return nil, err
	}
	return []typ{in(n, 0)}, nil
}

// inferKVAttention: Y is f32 [B, H, S, Dv] from Q [B, H, S, D] and the
// caches [B, Hkv, P, D], [B, Hkv, P, Dv] of one cache dtype.
func inferKVAttention(_ *state, n *ir.Node) ([]typ, error) {
	if n.In(1) == nil || n.In(2) == nil || n.In(3) == nil {
		return nil, fmt.Errorf("KVAttention needs Q, KCache, VCache and Positions")
	}
	sh, err := kvShapes(n, []string{"Q", "KCache", "VCache"}, 0, 1, 2)
	if err != nil {
		return nil, err
	}
	q, k, v := sh[0], sh[1], sh[2]
	if dt := in(n, 0).dt; dt.Valid() && dt != ir.Float32 {
		return nil, fmt.Errorf("KVAttention Q is %v, want f32", dt)
	}
	if err := weftSameDTypes(n, []string{"KCache", "VCache"}, 1, 2); err != nil {
		return nil, err
	}
	if err := kvCacheType(n.Op, "KCache", in(n, 1).dt, k[3]); err != nil {
		return nil, err
	}
	if err := kvCacheType(n.Op, "VCache", in(n, 2).dt, v[3]); err != nil {
		return nil, err
	}
	batch := q[0]
	for _, p := range [][3]any{{"batch", k[0], v[0]}, {"kv heads", k[1], v[1]}, {"capacity", k[2], v[2]}} {
		if _, err := unifyDim(p[1].(ir.Dim), p[2].(ir.Dim)); err != nil {
			return nil, fmt.Errorf("KVAttention %s of KCache [%v] and VCache [%v]: %w", p[0], k, v, err)
		}
	}
	if batch, err = unifyDim(batch, k[0]); err != nil {
		return nil, fmt.Errorf("KVAttention batch of Q [%v] and KCache [%v]: %w", q, k, err)
	}
	if _, err := unifyDim(q[3], k[3]); err != nil {
		return nil, fmt.Errorf("KVAttention head size of Q [%v] and KCache [%v]: %w", q, k, err)
	}
	if h, hkv := q[1], k[1]; h.Known() && hkv.Known() && (hkv.Size == 0 || h.Size%hkv.Size != 0) {
		return nil, fmt.Errorf("KVAttention Q has %d heads, not a multiple of the %d kv heads", h.Size, hkv.Size)
	}
	if err := kvPositions(n, 3, batch, q[2]); err != nil {
		return nil, err
	}
	return []typ{{ir.Float32, ir.Shape{batch, q[1], q[2], v[3]}}}, nil
}
