package passes

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

func init() { register(inferRotaryEmbedding, "RotaryEmbedding") }

// inferRotaryEmbedding: Y has X's type. X is 4-D [B, H, S, D], the caches
// [max_pos, R/2] have X's dtype and position_ids is i64 [B, S] (see
// ir/ops.go); provable mismatches are errors.
func inferRotaryEmbedding(_ *state, n *ir.Node) ([]typ, error) {
	if err := weftSameDTypes(n, []string{"X", "cos_cache", "sin_cache"}, 0, 1, 2); err != nil {
		return nil, err
	}
	x, cs, pos := in(n, 0), in(n, 1), in(n, 3)
	if dt := pos.dt; dt.Valid() && dt != ir.Int64 {
		return nil, fmt.Errorf("RotaryEmbedding position_ids is %v, want i64", dt)
	}
	if x.sh == nil {
		return []typ{x}, nil
	}
	if len(x.sh) != 4 {
		return nil, fmt.Errorf("RotaryEmbedding X has rank %d, want 4 ([batch, heads, seq, head_dim])", len(x.sh))
	}
	if pos.sh != nil {
		if len(pos.sh) != 2 {
			return nil, fmt.Errorf("RotaryEmbedding position_ids has rank %d, want 2 ([batch, seq])", len(pos.sh))
		}
		if _, err := unifyDim(pos.sh[0], x.sh[0]); err != nil {
			return nil, fmt.Errorf("RotaryEmbedding position_ids batch: %w", err)
		}
		if _, err := unifyDim(pos.sh[1], x.sh[2]); err != nil {
			return nil, fmt.Errorf("RotaryEmbedding position_ids seq: %w", err)
		}
	}
	if cs.sh != nil && len(cs.sh) != 2 {
		return nil, fmt.Errorf("RotaryEmbedding cos_cache has rank %d, want 2 ([max_position, rotary_dim/2])", len(cs.sh))
	}
	if d := x.sh[3]; d.Known() && cs.sh != nil && cs.sh[1].Known() {
		r := n.AttrInt("rotary_embedding_dim", 0)
		if r == 0 {
			r = d.Size
		}
		if 2*cs.sh[1].Size != r {
			return nil, fmt.Errorf("RotaryEmbedding cos_cache has %d columns, want rotary_dim/2 = %d", cs.sh[1].Size, r/2)
		}
	}
	return []typ{x}, nil
}
