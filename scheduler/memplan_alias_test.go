package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// TestMemoryPlanInPlaceOutput: the output of an op that writes an input in
// place (KVCacheUpdate) gets no buffer of its own, and the input it writes
// stays alive (its bytes reserved) as long as the output is read.
func TestMemoryPlanInPlaceOutput(t *testing.T) {
	g := newMG("kv")
	pos := g.b.Input("pos", ir.Int64, ir.S(1, 1))
	// A cache that a node produces (so that it is planned) ...
	c := g.relu(g.in(1, 2, 16, 8))
	u := g.op("KVCacheUpdate", []int64{1, 2, 16, 8}, c, g.in(1, 2, 1, 8), pos)
	// ... then work whose buffers could reuse c's bytes if c died at the
	// update ...
	x := g.in(1, 2, 16, 8)
	for i := 0; i < 4; i++ {
		x = g.relu(x)
	}
	// ... and a read of the updated cache at the end.
	y := g.op("Add", []int64{1, 2, 16, 8}, u, x)
	g.b.Output("y", y)
	gr, err := g.b.Build()
	require.NoError(t, err)
	p := schedule(t, gr)

	life, _ := p.Lifetimes()
	require.Equal(t, life[y].Def, life[c].Last, "reading the update's output reads the cache it wrote")
	var cb, ub plan.Buffer
	for _, b := range p.Buffers {
		switch b.Value {
		case c:
			cb = b
		case u:
			ub = b
		}
	}
	require.EqualValues(t, -1, ub.Offset, "the in-place output has no storage of its own")
	require.False(t, p.Plannable(ub, life))
	require.GreaterOrEqual(t, cb.Offset, int64(0))
	for _, b := range p.Buffers {
		if b.Value == c || b.Offset < 0 || !life[b.Value].Overlaps(life[c]) {
			continue
		}
		require.True(t, b.Offset+b.Bytes <= cb.Offset || cb.Offset+cb.Bytes <= b.Offset,
			"%v shares bytes with the live cache %v", b.Value, c)
	}
}
