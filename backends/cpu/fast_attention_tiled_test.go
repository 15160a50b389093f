package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// setAttnTiling sets the tiled path's threshold and tile sizes (and drops
// minFastFlops so tiny shapes reach the fast kernel) until the test ends.
func setAttnTiling(t testing.TB, minScores, tq, tk int) {
	m0, q0, k0, f0 := attnTiledMinScores, attnTileQ, attnTileK, minFastFlops
	attnTiledMinScores, attnTileQ, attnTileK, minFastFlops = minScores, tq, tk, 0
	t.Cleanup(func() { attnTiledMinScores, attnTileQ, attnTileK, minFastFlops = m0, q0, k0, f0 })
}

// attnCase builds the inputs of one Attention case: variant v picks the
// mask form, causal rule, grouped heads and Dv.
func attnCase(r *rand.Rand, v, sq, skv int) (name string, in []*ir.Tensor, attrs []ir.AttrOption) {
	B, H, Hkv, D, Dv := 1, 2, 2, 16, 16
	f := func(s ...int) *ir.Tensor {
		sh := make([]int64, len(s))
		for i, d := range s {
			sh[i] = int64(d)
		}
		return randF32(r, sh...)
	}
	ninf := float32(math.Inf(-1))
	// floatMask is a random additive mask of shape s, about one entry in
	// eight -inf, and (hideRow ≥ 0) every entry of flat row hideRow -inf.
	floatMask := func(hideRow int, s ...int) *ir.Tensor {
		m := f(s...)
		x := m.Float32s()
		last := s[len(s)-1]
		for i := range x {
			if r.IntN(8) == 0 || i/last == hideRow {
				x[i] = ninf
			}
		}
		return m
	}
	boolMask := func(hideRow int, s ...int) *ir.Tensor {
		sh := make([]int64, len(s))
		for i, d := range s {
			sh[i] = int64(d)
		}
		m := ir.NewTensor(ir.Bool, sh)
		last := s[len(s)-1]
		for i := range m.Data {
			if r.IntN(6) != 0 && i/last != hideRow {
				m.Data[i] = 1
			}
		}
		return m
	}
	var mask *ir.Tensor
	switch v % 8 {
	case 0:
		name = "plain"
	case 1:
		name, H, Dv = "causal-gqa", 4, 24
		attrs = []ir.AttrOption{ir.Int("is_causal", 1)}
	case 2:
		name, B = "float-mask-B11S", 2
		mask = floatMask(-1, B, 1, 1, skv)
	case 3:
		name = "float-mask-2d"
		mask = floatMask(sq/2, sq, skv)
	case 4:
		name = "bool-mask-full"
		mask = boolMask(sq-1, B, H, sq, skv)
	case 5:
		name, H, Hkv = "float-mask-col-gqa", 4, 1
		mask = floatMask(-1, 1, H, sq, 1) // one value per row (-inf: a hidden row)
	case 6:
		name, Dv = "causal-mask-scale", 8
		mask = floatMask(-1, 1, 1, sq, skv)
		attrs = []ir.AttrOption{ir.Int("is_causal", 1), ir.Float("scale", 0.4)}
	case 7:
		name, D, Dv = "bool-mask-1d", 32, 12
		mask = boolMask(-1, skv)
	}
	in = []*ir.Tensor{f(B, H, sq, D), f(B, Hkv, skv, D), f(B, Hkv, skv, Dv)}
	if mask != nil {
		in = append(in, mask)
	}
	return fmt.Sprintf("%s/Sq=%d/Skv=%d", name, sq, skv), in, attrs
}

// TestAttentionTiledMatchesReference runs the tiled path (forced by the
// threshold) against the reference kernel over query and key lengths with
// every tail of several tile sizes, causal with Sq ≠ Skv, each mask form
// (float and bool, broadcast along different axes, fully hidden rows),
// grouped-query heads and Dv ≠ D, at every float ISA level. The online softmax
// sums in another order than the reference (float64): the tolerance is
// 1e-4 relative to max(1, |want|).
func TestAttentionTiledMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	lens := []int{1, 7, 65, 300, 1100}
	tiles := [][2]int{{84, 192}, {5, 7}, {16, 64}}
	v := 0
	for _, sq := range lens {
		for _, skv := range lens {
			name, in, attrs := attnCase(r, v, sq, skv)
			v++
			n := node("Attention", attrs, in)
			want := refRun(t, n, in)[0]
			t.Run(name, func(t *testing.T) {
				forEachFloatISA(t, func(t *testing.T) {
					for _, tl := range tiles {
						setAttnTiling(t, 0, tl[0], tl[1])
						got := runAttention(t, n, in, 3)
						requireClose(t, want, got, 1e-4)
					}
				})
			})
		}
	}
}

// runAttention builds the fast Attention kernel for n on a pool of the
// given size and runs it once on garbage-filled output and scratch.
func runAttention(t testing.TB, n *ir.Node, in []*ir.Tensor, workers int) *ir.Tensor {
	spec := &nodeSpec{n: n, pool: poolFor(workers)}
	for _, x := range in {
		spec.in = append(spec.in, arg{dt: x.DType, shape: x.Shape, ok: true})
	}
	q, v := in[0].Shape, in[2].Shape
	out := ir.NewTensor(ir.Float32, []int64{q[0], q[1], q[2], v[3]})
	for i := range out.Data {
		out.Data[i] = 0xAB
	}
	spec.out = []arg{{dt: ir.Float32, shape: out.Shape, ok: true}}
	k := buildFastAttention(spec)
	require.NotNil(t, k, "the fast kernel declined")
	scratch := ir.AlignedBytes(spec.scratch)
	for i := range scratch {
		scratch[i] = 0xCD
	}
	require.NoError(t, k(in, []*ir.Tensor{out}, scratch))
	return out
}

// TestAttentionTiledChoice: below the threshold the untiled path (scratch
// growing with Sq·Skv), above it the tiled one, whose scratch does not
// depend on Skv; both agree with each other on a shape at the boundary.
func TestAttentionTiledChoice(t *testing.T) {
	scratch := func(sq, skv int) int {
		r := rand.New(rand.NewPCG(1, 1))
		in := []*ir.Tensor{randF32(r, 1, 2, int64(sq), 64), randF32(r, 1, 2, int64(skv), 64), randF32(r, 1, 2, int64(skv), 64)}
		spec := &nodeSpec{n: node("Attention", nil, in), pool: poolFor(1)}
		for _, x := range in {
			spec.in = append(spec.in, arg{dt: x.DType, shape: x.Shape, ok: true})
		}
		spec.out = []arg{{dt: ir.Float32, shape: in[0].Shape, ok: true}}
		require.NotNil(t, buildFastAttention(spec))
		return spec.scratch
	}
	require.Less(t, scratch(128, 128), scratch(256, 256), "untiled scratch grows with the scores")
	require.Equal(t, scratch(1024, 1024), scratch(1024, 8192), "tiled scratch independent of Skv")
	require.Less(t, scratch(4096, 4096), 1<<20, "tiled scratch of a 4096-token prefill")

	r := rand.New(rand.NewPCG(5, 6))
	in := []*ir.Tensor{randF32(r, 1, 3, 200, 64), randF32(r, 1, 3, 300, 64), randF32(r, 1, 3, 300, 64)}
	n := node("Attention", []ir.AttrOption{ir.Int("is_causal", 1)}, in)
	full := runAttention(t, n, in, 2)
	setAttnTiling(t, 0, attnTileQ, attnTileK)
	requireClose(t, full, runAttention(t, n, in, 2), 1e-5)
}

// BenchmarkAttentionTiled times the untiled and tiled paths on one binary
// run: BERT-shaped heads (Sq = Skv = 128, D = 64: the untiled path's
// domain), a mid length just past the threshold (640) and a long sequence
// (Sq = Skv = 2048, plain and causal), reporting the kernel's scratch
// bytes.
func BenchmarkAttentionTiled(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name   string
		h, s   int64
		causal int64
	}{{"bert", 12, 128, 0}, {"mid", 8, 640, 0}, {"long", 4, 2048, 0}, {"long-causal", 4, 2048, 1}} {
		in := []*ir.Tensor{randF32(r, 1, c.h, c.s, 64), randF32(r, 1, c.h, c.s, 64), randF32(r, 1, c.h, c.s, 64)}
		n := node("Attention", []ir.AttrOption{ir.Int("is_causal", c.causal)}, in)
		for _, path := range []string{"full", "tiled"} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/threads=%d", c.name, path, threads), func(b *testing.B) {
					m := 1 << 40
					if path == "tiled" {
						m = 0
					}
					setAttnTiling(b, m, attnTileQ, attnTileK)
					spec := &nodeSpec{n: n, pool: poolFor(threads)}
					for _, x := range in {
						spec.in = append(spec.in, arg{dt: x.DType, shape: x.Shape, ok: true})
					}
					out := []*ir.Tensor{ir.NewTensor(ir.Float32, in[0].Shape)}
					spec.out = []arg{{dt: ir.Float32, shape: out[0].Shape, ok: true}}
					k := buildFastAttention(spec)
					if k == nil {
						b.Fatal("no kernel")
					}
					scratch := ir.AlignedBytes(spec.scratch)
					for b.Loop() {
						if err := k(in, out, scratch); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(spec.scratch), "scratch-B")
				})
			}
		}
	}
}
