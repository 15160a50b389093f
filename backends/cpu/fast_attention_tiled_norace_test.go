//go:build !race

package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// TestAttentionTiledNoAlloc: a run of the tiled path allocates nothing
// (not under the race detector, whose sync.Pool drops items).
func TestAttentionTiledNoAlloc(t *testing.T) {
	setAttnTiling(t, 0, 32, 48)
	r := rand.New(rand.NewPCG(9, 9))
	in := []*ir.Tensor{randF32(r, 1, 4, 100, 32), randF32(r, 1, 2, 130, 32), randF32(r, 1, 2, 130, 32), randF32(r, 1, 1, 100, 130)}
	n := node("Attention", []ir.AttrOption{ir.Int("is_causal", 1)}, in)
	spec := &nodeSpec{n: n, pool: poolFor(2)}
	for _, x := range in {
		spec.in = append(spec.in, arg{dt: x.DType, shape: x.Shape, ok: true})
	}
	out := []*ir.Tensor{ir.NewTensor(ir.Float32, in[0].Shape)}
	spec.out = []arg{{dt: ir.Float32, shape: out[0].Shape, ok: true}}
	k := buildFastAttention(spec)
	require.NotNil(t, k)
	scratch := ir.AlignedBytes(spec.scratch)
	allocs := testing.AllocsPerRun(20, func() {
		if err := k(in, out, scratch); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}
