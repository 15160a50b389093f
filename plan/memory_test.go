package plan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// memPlan is x → a=Relu(x) → b=Relu(a) → c=Add(a, b) → d=Relu(c) (output),
// f32[16] everywhere (64 bytes), one partition on "cpu". Lifetimes: a [0,2],
// b [1,2], c [2,3], d [3,3].
func memPlan(t *testing.T) (*plan.Plan, []*ir.Value) {
	b := ir.NewBuilder("mem")
	x := b.Input("x", ir.Float32, ir.S(16))
	a := b.Op("Relu", x)
	bb := b.Op("Relu", a)
	c := b.Op("Add", a, bb)
	d := b.Op("Relu", c)
	b.Output("d", d)
	g, err := b.Build()
	require.NoError(t, err)
	vals := []*ir.Value{a, bb, c, d}
	p := &plan.Plan{Graph: g, Partitions: []*plan.Partition{{Device: "cpu", Nodes: g.Nodes}}}
	for _, v := range vals {
		v.DType, v.Shape = ir.Float32, ir.S(16)
		p.Buffers = append(p.Buffers, plan.Buffer{Value: v, Device: "cpu", Bytes: 64, Offset: -1})
	}
	return p, vals
}

func TestLifetimes(t *testing.T) {
	p, v := memPlan(t)
	life, steps := p.Lifetimes()
	require.Equal(t, 4, steps)
	require.Equal(t, map[*ir.Value]plan.Lifetime{v[0]: {0, 2}, v[1]: {1, 2}, v[2]: {2, 3}, v[3]: {3, 3}}, life)

	// A value read only inside an If branch lives until the If.
	b := ir.NewBuilder("if")
	x := b.Input("x", ir.Float32, ir.S(4))
	cond := b.Input("cond", ir.Bool, ir.S())
	a := b.Op("Relu", x)
	e := b.Op("Neg", x)
	then := b.G.NewSubgraph("then")
	then.Outputs = []*ir.Value{then.AddNode("Relu", "", []*ir.Value{a}, 1, nil).Outputs[0]}
	els := b.G.NewSubgraph("else")
	els.Outputs = []*ir.Value{els.AddNode("Neg", "", []*ir.Value{a}, 1, nil).Outputs[0]}
	y := b.OpA("If", []ir.AttrOption{ir.GraphAttr("then_branch", then), ir.GraphAttr("else_branch", els)}, cond)
	b.Output("y", y)
	b.Output("e", e)
	p = &plan.Plan{Graph: b.G, Partitions: []*plan.Partition{{Nodes: b.G.Nodes}}}
	life, _ = p.Lifetimes()
	require.Equal(t, plan.Lifetime{Def: 0, Last: 2}, life[a])
	require.Equal(t, plan.Lifetime{Def: 1, Last: 2}, life[e], "graph outputs live to the end")
	require.NotContains(t, life, then.Outputs[0], "subgraph values are not planned")
}

func TestVerify(t *testing.T) {
	type place struct {
		off     int64
		inPlace int // index of the value reused in place, or -1
	}
	valid := []place{{0, -1}, {64, -1}, {64, 1}, {-1, -1}} // c overwrites b in place
	tests := []struct {
		name   string
		places []place
		arena  plan.Arena
		want   string
	}{
		{"valid", valid, plan.Arena{Device: "cpu", Size: 128}, ""},
		{"in place of the other input", []place{{0, -1}, {64, -1}, {0, 0}, {-1, -1}}, plan.Arena{Device: "cpu", Size: 128}, ""},
		{"unplanned", []place{{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}}, plan.Arena{Device: "cpu", Size: 0}, ""},
		{"a and b share bytes", []place{{0, -1}, {0, -1}, {64, -1}, {-1, -1}}, plan.Arena{Device: "cpu", Size: 128}, "are alive at once"},
		{"disjoint", []place{{0, -1}, {64, -1}, {128, -1}, {-1, -1}}, plan.Arena{Device: "cpu", Size: 192}, ""},
		{"c over a without a claim", []place{{0, -1}, {64, -1}, {0, -1}, {-1, -1}}, plan.Arena{Device: "cpu", Size: 128}, "share bytes"},
		{"b reuses a, which lives on", []place{{0, -1}, {0, 0}, {64, -1}, {-1, -1}}, plan.Arena{Device: "cpu", Size: 128}, "not read last by its producer"},
		{"claim at other bytes", []place{{0, -1}, {64, -1}, {128, 1}, {-1, -1}}, plan.Arena{Device: "cpu", Size: 192}, "do not occupy the same bytes"},
		{"misaligned", []place{{0, -1}, {96, -1}, {-1, -1}, {-1, -1}}, plan.Arena{Device: "cpu", Size: 192}, "not 64-byte aligned"},
		{"overrun", []place{{0, -1}, {64, -1}, {128, -1}, {-1, -1}}, plan.Arena{Device: "cpu", Size: 128}, "overruns arena 0"},
		{"graph output planned", []place{{0, -1}, {64, -1}, {128, -1}, {0, -1}}, plan.Arena{Device: "cpu", Size: 192}, "cannot be planned"},
		{"arena size", valid, plan.Arena{Device: "cpu", Size: 130}, "want a non-negative multiple of 64"},
		{"arena device", valid, plan.Arena{Device: "gpu", Size: 128}, "lives on cpu but is placed in arena 0 of gpu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, v := memPlan(t)
			p.Arenas = []plan.Arena{tc.arena}
			for i, pl := range tc.places {
				p.Buffers[i].Offset = pl.off
				if pl.inPlace >= 0 {
					p.Buffers[i].InPlaceOf = v[pl.inPlace]
				}
			}
			err := p.Verify()
			if tc.want == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.want)
			}
		})
	}
}

func TestMemoryStats(t *testing.T) {
	p, _ := memPlan(t)
	p.Arenas = []plan.Arena{{Device: "cpu", Size: 128}}
	naive, planned := p.MemoryStats()
	require.Equal(t, int64(3*64), naive, "a, b and c; the output d is not counted")
	require.Equal(t, int64(128), planned)
}
