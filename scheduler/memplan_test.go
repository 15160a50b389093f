package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// anyDevice supports every op; memory planning tests only need placement.
type anyDevice struct{ name string }

func (d anyDevice) Name() string                                         { return d.name }
func (d anyDevice) Kind() backends.Kind                                  { return backends.CPU }
func (d anyDevice) HostVisible() bool                                    { return true }
func (d anyDevice) Alloc(int) (backends.Buffer, error)                   { return nil, fmt.Errorf("no") }
func (d anyDevice) Supports(*ir.Node) error                              { return nil }
func (d anyDevice) Compile(*plan.Partition) (backends.Executable, error) { return nil, nil }

// mg builds f32 graphs with hand-computed shapes; weights are graph inputs
// (not planned, and nothing to allocate).
type mg struct {
	b *ir.Builder
	k int
}

func newMG(name string) *mg { return &mg{b: ir.NewBuilder(name)} }

func (g *mg) in(shape ...int64) *ir.Value {
	g.k++
	return g.b.Input(fmt.Sprint("in", g.k), ir.Float32, ir.S(shape...))
}

func (g *mg) op(op string, shape []int64, in ...*ir.Value) *ir.Value {
	v := g.b.Op(op, in...)
	v.DType, v.Shape = ir.Float32, ir.S(shape...)
	return v
}

func shapeOf(v *ir.Value) []int64 { return v.Shape.Ints() }

// conv is Conv (bias folded in, as -O2 leaves it) from x to cout channels.
func (g *mg) conv(x *ir.Value, cout, k, stride int64) *ir.Value {
	s := shapeOf(x)
	h, w := (s[2]+2*(k/2)-k)/stride+1, (s[3]+2*(k/2)-k)/stride+1
	return g.op("Conv", []int64{s[0], cout, h, w}, x, g.in(cout, s[1], k, k), g.in(cout))
}

func (g *mg) relu(x *ir.Value) *ir.Value { return g.op("Relu", shapeOf(x), x) }

// resnet50 is ResNet-50 at batch 1, 224×224: stem, 3-4-6-3 bottlenecks, head.
func resnet50(t testing.TB) *ir.Graph {
	g := newMG("resnet50")
	x := g.in(1, 3, 224, 224)
	h := g.relu(g.conv(x, 64, 7, 2))
	h = g.op("MaxPool", []int64{1, 64, 56, 56}, h)
	for si, st := range []struct{ width, blocks int64 }{{64, 3}, {128, 4}, {256, 6}, {512, 3}} {
		for bi := int64(0); bi < st.blocks; bi++ {
			stride := int64(1)
			if bi == 0 && si > 0 {
				stride = 2
			}
			short := h
			if bi == 0 {
				short = g.conv(h, 4*st.width, 1, stride)
			}
			y := g.relu(g.conv(h, st.width, 1, 1))
			y = g.relu(g.conv(y, st.width, 3, stride))
			y = g.conv(y, 4*st.width, 1, 1)
			h = g.relu(g.op("Add", shapeOf(y), y, short))
		}
	}
	h = g.op("GlobalAveragePool", []int64{1, 2048, 1, 1}, h)
	h = g.op("Flatten", []int64{1, 2048}, h)
	h = g.op("Add", []int64{1, 1000}, g.op("MatMul", []int64{1, 1000}, h, g.in(2048, 1000)), g.in(1000))
	g.b.Output("logits", h)
	gr, err := g.b.Build()
	require.NoError(t, err)
	return gr
}

// bert is a BERT-base-shaped encoder (layers × [attention, FFN], hidden
// 768, 12 heads, FFN 3072) at sequence length 128.
func bert(t testing.TB, layers int) *ir.Graph {
	const S, H, NH, D, F = 128, 768, 12, 64, 3072
	g := newMG("bert")
	x := g.in(1, S, H)
	mask := g.in(1, 1, 1, S)
	lin := func(x *ir.Value, out int64) *ir.Value {
		s := append(shapeOf(x)[:len(shapeOf(x))-1:len(shapeOf(x))-1], out)
		return g.op("Add", s, g.op("MatMul", s, x, g.in(shapeOf(x)[len(shapeOf(x))-1], out)), g.in(out))
	}
	heads := func(v *ir.Value) *ir.Value {
		r := g.op("Reshape", []int64{1, S, NH, D}, v, g.in(4))
		return g.op("Transpose", []int64{1, NH, S, D}, r)
	}
	ln := func(v *ir.Value) *ir.Value { return g.op("LayerNormalization", shapeOf(v), v, g.in(H), g.in(H)) }
	h := x
	for range layers {
		q, k, v := heads(lin(h, H)), heads(lin(h, H)), heads(lin(h, H))
		kt := g.op("Transpose", []int64{1, NH, D, S}, k)
		sc := g.op("MatMul", []int64{1, NH, S, S}, q, kt)
		sc = g.op("Mul", []int64{1, NH, S, S}, sc, g.in())
		sc = g.op("Add", []int64{1, NH, S, S}, sc, mask)
		p := g.op("Softmax", []int64{1, NH, S, S}, sc)
		c := g.op("MatMul", []int64{1, NH, S, D}, p, v)
		c = g.op("Transpose", []int64{1, S, NH, D}, c)
		c = g.op("Reshape", []int64{1, S, H}, c, g.in(3))
		h = ln(g.op("Add", []int64{1, S, H}, lin(c, H), h))
		f := g.op("Gelu", []int64{1, S, F}, lin(h, F))
		h = ln(g.op("Add", []int64{1, S, H}, lin(f, H), h))
	}
	g.b.Output("hidden", h)
	gr, err := g.b.Build()
	require.NoError(t, err)
	return gr
}

func schedule(t testing.TB, g *ir.Graph, devs ...backends.Device) *plan.Plan {
	if len(devs) == 0 {
		devs = []backends.Device{anyDevice{"cpu"}}
	}
	p, err := Schedule(g, Options{Devices: devs})
	require.NoError(t, err)
	require.NoError(t, p.Verify())
	return p
}

// The acceptance: the planned arena is at most 40% of the naive
// sum on ResNet-50- and BERT-shaped graphs.
func TestMemoryPlanShrinksRealModels(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    *ir.Graph
	}{{"resnet50", resnet50(t)}, {"bert4", bert(t, 4)}, {"bert12", bert(t, 12)}} {
		t.Run(tc.name, func(t *testing.T) {
			p := schedule(t, tc.g)
			naive, planned := p.MemoryStats()
			t.Logf("%s: naive %.1f MiB, planned %.1f MiB (%.1f%%)", tc.name, float64(naive)/(1<<20), float64(planned)/(1<<20), 100*float64(planned)/float64(naive))
			require.Positive(t, planned)
			require.LessOrEqual(t, float64(planned), 0.40*float64(naive))
			// No arena can be smaller than the largest set of values alive
			// at one step (a lower bound every valid plan respects).
			require.GreaterOrEqual(t, planned, peakLive(p))
		})
	}
}

// peakLive is the largest total of aligned plannable bytes alive at one
// step, counting an in-place pair once.
func peakLive(p *plan.Plan) int64 {
	life, steps := p.Lifetimes()
	live := make([]int64, steps)
	for _, b := range p.Buffers {
		if !p.Plannable(b, life) || b.InPlaceOf != nil {
			continue
		}
		l := life[b.Value]
		for s := l.Def; s <= l.Last; s++ {
			live[s] += plan.AlignUp(b.Bytes)
		}
	}
	var peak int64
	for _, v := range live {
		peak = max(peak, v)
	}
	return peak
}

// Every visiting order, with and without in-place reuse, yields a plan the
// verifier accepts, and planMemory keeps the smallest.
func TestEveryOrderIsValid(t *testing.T) {
	graphs := []*ir.Graph{resnet50(t), bert(t, 2)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		graphs = append(graphs, randomGraph(r))
	}
	for gi, g := range graphs {
		p := schedule(t, g, anyDevice{"cpu"})
		_, best := p.MemoryStats()
		life, _ := p.Lifetimes()
		for _, inPlace := range []bool{true, false} {
			for _, o := range orders {
				slots := buildSlots(p, life, inPlace)
				total := assign(slots, o)
				apply(p, slots)
				require.NoError(t, p.Verify(), "graph %d, order %s, in place %v", gi, o.name, inPlace)
				_, planned := p.MemoryStats()
				require.Equal(t, plan.AlignUp(total), planned)
				require.GreaterOrEqual(t, planned, best, "graph %d, order %s", gi, o.name)
			}
		}
	}
}

// randomGraph is a random DAG of elementwise and matmul-like ops over a few
// shapes, with several outputs and long-lived values.
func randomGraph(r *rand.Rand) *ir.Graph {
	g := newMG("random")
	shapes := [][]int64{{3, 5}, {17}, {2, 8, 8}, {1, 100}, {64}}
	vals := []*ir.Value{}
	for _, s := range shapes {
		vals = append(vals, g.in(s...))
	}
	n := 10 + r.IntN(40)
	for range n {
		a := vals[r.IntN(len(vals))]
		switch r.IntN(3) {
		case 0:
			vals = append(vals, g.op([]string{"Relu", "Exp", "Neg"}[r.IntN(3)], shapeOf(a), a))
		case 1:
			var same []*ir.Value
			for _, v := range vals {
				if v.Shape.Equal(a.Shape) {
					same = append(same, v)
				}
			}
			b := same[r.IntN(len(same))]
			vals = append(vals, g.op("Add", shapeOf(a), a, b))
		default:
			s := shapes[r.IntN(len(shapes))]
			vals = append(vals, g.op("Cast", s, a)) // any op: a new shape
		}
	}
	for i := range 1 + r.IntN(3) {
		g.b.Output(fmt.Sprint("out", i), vals[len(vals)-1-r.IntN(n)])
	}
	gr, _ := g.b.Build()
	return gr
}

func TestInPlaceChains(t *testing.T) {
	g := newMG("chain")
	x := g.in(256)
	a := g.op("Exp", []int64{256}, x)
	b := g.op("Relu", []int64{256}, a)
	c := g.op("Neg", []int64{256}, b)
	d := g.op("Add", []int64{256}, c, a) // a is read again: c cannot reuse it, but d can reuse c or a
	g.b.Output("y", g.op("Relu", []int64{256}, d))
	gr, err := g.b.Build()
	require.NoError(t, err)
	p := schedule(t, gr)
	byValue := buffersByValue(p)
	require.Nil(t, byValue[b].InPlaceOf, "a is still alive after b")
	require.Equal(t, b, byValue[c].InPlaceOf)
	require.NotNil(t, byValue[d].InPlaceOf)
	require.Equal(t, int64(-1), byValue[gr.Outputs[0]].Offset, "graph outputs are not carved from the arena")
	// a, and the chain b→c→d: two 1 KiB slots.
	require.Equal(t, []plan.Arena{{Device: "cpu", Size: 2048}}, p.Arenas)
}

func TestMemoryPlanPerDeviceAndDeterministic(t *testing.T) {
	g := newMG("two")
	x := g.in(64)
	a := g.op("Relu", []int64{64}, x)
	b := g.op("Double", []int64{64}, a)
	c := g.op("Double", []int64{64}, b)
	g.b.Output("y", g.op("Relu", []int64{128}, c))
	gr, err := g.b.Build()
	require.NoError(t, err)
	devs := []backends.Device{onlyDevice{"a", "Relu"}, onlyDevice{"b", "Double"}}
	p1 := schedule(t, gr, devs...)
	p2 := schedule(t, gr, devs...)
	require.Len(t, p1.Arenas, 2)
	require.Equal(t, p1.Arenas, p2.Arenas)
	for i := range p1.Buffers {
		require.Equal(t, p1.Buffers[i].Offset, p2.Buffers[i].Offset)
		require.Equal(t, p1.Buffers[i].Device, p1.Arenas[max(p1.Buffers[i].Arena, 0)].Device)
	}
}

// onlyDevice supports one op.
type onlyDevice struct{ name, op string }

func (d onlyDevice) Name() string                       { return d.name }
func (d onlyDevice) Kind() backends.Kind                { return backends.CPU }
func (d onlyDevice) HostVisible() bool                  { return true }
func (d onlyDevice) Alloc(int) (backends.Buffer, error) { return nil, fmt.Errorf("no") }
func (d onlyDevice) Supports(n *ir.Node) error {
	if n.Op == d.op {
		return nil
	}
	return fmt.Errorf("%w: %s", ir.ErrUnsupported, n.Op)
}
func (d onlyDevice) Compile(*plan.Partition) (backends.Executable, error) { return nil, nil }

// TestViewsShareTheirInputsBytes: a Reshape whose input dies at it is
// planned on the input's bytes; one whose input is read again is not, nor
// is one that changes the byte count.
func TestViewsShareTheirInputsBytes(t *testing.T) {
	g := newMG("views")
	x := g.in(4, 64)
	a := g.op("Exp", []int64{4, 64}, x)
	shape := g.b.Const("shape", ir.FromInt64([]int64{2}, []int64{16, 16}))
	r1 := g.op("Reshape", []int64{16, 16}, a, shape) // a dies here
	b := g.op("Neg", []int64{16, 16}, r1)
	r2 := g.op("Reshape", []int64{4, 64}, b, shape) // b is read again below
	c := g.op("Add", []int64{4, 64}, r2, x)
	d := g.op("Add", []int64{16, 16}, b, b)
	g.b.Output("y", c)
	g.b.Output("z", d)
	gr, err := g.b.Build()
	require.NoError(t, err)
	p := schedule(t, gr)
	byValue := buffersByValue(p)
	require.Equal(t, a, byValue[r1].InPlaceOf)
	require.Equal(t, byValue[a].Offset, byValue[r1].Offset)
	require.Nil(t, byValue[r2].InPlaceOf, "b is still read after the second reshape")
	require.NoError(t, p.Verify())
}

// buffersByValue indexes a plan's buffers by their values.
func buffersByValue(p *plan.Plan) map[*ir.Value]plan.Buffer {
	m := map[*ir.Value]plan.Buffer{}
	for _, b := range p.Buffers {
		m[b.Value] = b
	}
	return m
}
