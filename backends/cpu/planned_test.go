package cpu_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/runtime"
	"github.com/weftrt/weft/scheduler"
)

func cpuDevice(t testing.TB) backends.Device {
	b, ok := backends.Get("cpu")
	require.True(t, ok)
	ds, err := b.Devices()
	require.NoError(t, err)
	require.Equal(t, cpu.DeviceName, ds[0].Name())
	return ds[0]
}

// plainDevice hides the CPU device's PlanCompiler: the old, reference path.
type plainDevice struct{ backends.Device }

func randTensor(r *rand.Rand, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	v := t.Float32s()
	for i := range v {
		v[i] = float32(r.NormFloat64() * 0.5)
	}
	return t
}

// annotate gives every value the dtype and shape the reference computes on
// inputs (the shape inference a compiled graph would have).
func annotate(t testing.TB, g *ir.Graph, inputs []*ir.Tensor) {
	env := backends.NewEnv(nil)
	for _, c := range g.Consts {
		env.Set(c, c.Const)
	}
	for i, v := range g.Inputs {
		env.Set(v, inputs[i])
	}
	ctx := &ref.Context{Ctx: context.Background(), Env: env}
	for _, n := range g.Nodes {
		require.NoError(t, ref.RunNode(ctx, n))
		for _, o := range n.Outputs {
			tt := env.Get(o)
			o.DType, o.Shape = tt.DType, ir.ShapeOf(tt.Shape)
		}
	}
}

// mlp is MatMul/Add/Relu ×2, MatMul/Add, Softmax on a [batch, 32] input.
func mlp(t testing.TB, batch ir.Dim) (*ir.Graph, []*ir.Tensor) {
	r := rand.New(rand.NewPCG(11, 12))
	b := ir.NewBuilder("mlp")
	x := b.Input("x", ir.Float32, ir.Shape{batch, ir.Dim{Size: 32}})
	h := x
	for i, d := range [][2]int64{{32, 64}, {64, 48}, {48, 10}} {
		w := b.Const("w", randTensor(r, d[0], d[1]))
		bias := b.Const("b", randTensor(r, d[1]))
		h = b.Op("Add", b.Op("MatMul", h, w), bias)
		if i < 2 {
			h = b.Op("Relu", h)
		}
	}
	b.Output("y", b.OpA("Softmax", []ir.AttrOption{ir.Int("axis", -1)}, h))
	g, err := b.Build()
	require.NoError(t, err)
	in := []*ir.Tensor{randTensor(r, 4, 32)}
	annotate(t, g, in)
	if !batch.Known() {
		g.Inputs[0].Shape = ir.Shape{batch, ir.Dim{Size: 32}}
		for _, n := range g.Nodes {
			n.Outputs[0].Shape[0] = batch
		}
	}
	return g, in
}

// cnn is Conv/Relu/MaxPool/Conv/Relu/GlobalAveragePool/Flatten/MatMul/Add.
func cnn(t testing.TB) (*ir.Graph, []*ir.Tensor) {
	r := rand.New(rand.NewPCG(13, 14))
	b := ir.NewBuilder("cnn")
	x := b.Input("x", ir.Float32, ir.S(1, 3, 16, 16))
	pad := ir.Ints("pads", 1, 1, 1, 1)
	h := b.OpA("Conv", []ir.AttrOption{pad}, x, b.Const("w1", randTensor(r, 8, 3, 3, 3)), b.Const("b1", randTensor(r, 8)))
	h = b.Op("Relu", h)
	h = b.OpA("MaxPool", []ir.AttrOption{ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2)}, h)
	h = b.OpA("Conv", []ir.AttrOption{pad}, h, b.Const("w2", randTensor(r, 16, 8, 3, 3)), b.Const("b2", randTensor(r, 16)))
	h = b.Op("Relu", h)
	h = b.Op("GlobalAveragePool", h)
	h = b.Op("Flatten", h)
	h = b.Op("Add", b.Op("MatMul", h, b.Const("w3", randTensor(r, 16, 10))), b.Const("b3", randTensor(r, 10)))
	b.Output("logits", h)
	g, err := b.Build()
	require.NoError(t, err)
	in := []*ir.Tensor{randTensor(r, 1, 3, 16, 16)}
	annotate(t, g, in)
	return g, in
}

func session(t testing.TB, g *ir.Graph, dev backends.Device) *runtime.Session {
	p, err := scheduler.Schedule(g, scheduler.Options{Devices: []backends.Device{dev}})
	require.NoError(t, err)
	require.NoError(t, p.Verify())
	s, err := runtime.NewSession(p, []backends.Device{dev})
	require.NoError(t, err)
	return s
}

func requireNear(t *testing.T, want, got *ir.Tensor) {
	t.Helper()
	require.Equal(t, want.Shape, got.Shape)
	w, g := want.Float32s(), got.Float32s()
	for i := range w {
		require.InDelta(t, w[i], g[i], 1e-5*math.Max(1, math.Abs(float64(w[i]))), "element %d", i)
	}
}

func TestPlannedRunAllocatesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(testing.TB) (*ir.Graph, []*ir.Tensor)
	}{
		{"mlp", func(t testing.TB) (*ir.Graph, []*ir.Tensor) { return mlp(t, ir.Dim{Size: 4}) }},
		{"cnn", cnn},
		{"mlp with unaligned weights", func(t testing.TB) (*ir.Graph, []*ir.Tensor) {
			g, in := mlp(t, ir.Dim{Size: 4})
			for _, c := range g.Consts {
				orig := c.Const.Data
				buf := make([]byte, len(orig)+3)
				c.Const.Data = buf[3:] // as a weight at an odd offset of a mapped file
				copy(c.Const.Data, orig)
			}
			return g, in
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, in := tc.build(t)
			want, err := ref.RunGraph(context.Background(), g, nil, in)
			require.NoError(t, err)
			s := session(t, g, cpuDevice(t))
			naive, planned := s.Plan().MemoryStats()
			require.Positive(t, planned)
			require.Less(t, planned, naive)
			t.Logf("%s: arena %d bytes, naive %d bytes", tc.name, planned, naive)

			out := []*ir.Tensor{ir.NewTensor(ir.Float32, want[0].Shape)}
			ctx := context.Background()
			require.NoError(t, s.RunInto(ctx, in, out)) // warm-up: allocates the run state
			requireNear(t, want[0], out[0])
			allocs := testing.AllocsPerRun(20, func() {
				if err := s.RunInto(ctx, in, out); err != nil {
					panic(err)
				}
			})
			require.Zero(t, allocs)
			requireNear(t, want[0], out[0])

			got, err := s.Run(ctx, map[string]*ir.Tensor{"x": in[0]})
			require.NoError(t, err)
			requireNear(t, want[0], got[g.Outputs[0].Name])
		})
	}
}

// A symbolic batch leaves every intermediate unplanned: each node takes the
// reference path, and the results still match.
func TestPlannedDynamicShapesFallBack(t *testing.T) {
	g, in := mlp(t, ir.Sym("n"))
	want, err := ref.RunGraph(context.Background(), g, nil, in)
	require.NoError(t, err)
	s := session(t, g, cpuDevice(t))
	require.Empty(t, s.Plan().Arenas)
	for range 2 {
		got, err := s.Run(context.Background(), map[string]*ir.Tensor{"x": in[0]})
		require.NoError(t, err)
		requireNear(t, want[0], got["y"])
	}
	out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{4, 10})}
	require.NoError(t, s.RunInto(context.Background(), in, out))
	requireNear(t, want[0], out[0])
	require.ErrorContains(t, s.RunInto(context.Background(), in, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{4, 9})}), `output "y" is f32[4 10], the caller's tensor is f32[4 9]`)
}

// Ops without an into kernel run the reference kernel and land in their
// planned (here in-place) slots; intermediate graph outputs are returned.
func TestPlannedFallbackInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	b := ir.NewBuilder("chain")
	x := b.Input("x", ir.Float32, ir.S(3, 7))
	a := b.Op("Sin", x)
	c := b.Op("Relu", a)
	d := b.Op("Cos", c)
	e := b.Op("Exp", b.Op("Add", d, b.Op("Sin", c)))
	b.Output("e", e)
	b.Output("c", c)
	g, err := b.Build()
	require.NoError(t, err)
	in := []*ir.Tensor{randTensor(r, 3, 7)}
	annotate(t, g, in)
	want, err := ref.RunGraph(context.Background(), g, nil, in)
	require.NoError(t, err)
	s := session(t, g, cpuDevice(t))
	inPlace := 0
	for _, bf := range s.Plan().Buffers {
		if bf.InPlaceOf != nil {
			inPlace++
		}
	}
	require.Positive(t, inPlace)
	for range 3 {
		got, err := s.Run(context.Background(), map[string]*ir.Tensor{"x": in[0]})
		require.NoError(t, err)
		requireNear(t, want[0], got["e"])
		requireNear(t, want[1], got["c"])
	}
}

// Concurrent runs each get their own arena.
func TestPlannedConcurrentRuns(t *testing.T) {
	g, _ := cnn(t)
	s := session(t, g, cpuDevice(t))
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 99))
			for range 5 {
				x := randTensor(r, 1, 3, 16, 16)
				want, err := ref.RunGraph(context.Background(), g, nil, []*ir.Tensor{x})
				require.NoError(t, err)
				got, err := s.Run(context.Background(), map[string]*ir.Tensor{"x": x})
				require.NoError(t, err)
				requireNear(t, want[0], got["logits"])
			}
		}()
	}
	wg.Wait()
}

// BenchmarkMLP compares the reference path (every node allocates its
// result) with planned execution, on the graph as built (O0) and after the
// -O2 pipeline (fused matmuls).
func BenchmarkMLP(b *testing.B) {
	ctx := context.Background()
	for _, level := range []int{0, 2} {
		g, in := mlp(b, ir.Dim{Size: 4})
		p, err := scheduler.Schedule(g, scheduler.Options{Devices: []backends.Device{cpuDevice(b)}})
		require.NoError(b, err)
		if level > 0 {
			p, _, err = weft.Compile(g, weft.Options{OptLevel: level})
			require.NoError(b, err)
		}
		inputs := map[string]*ir.Tensor{"x": in[0]}
		for _, bc := range []struct {
			name string
			dev  backends.Device
		}{{"reference", plainDevice{cpuDevice(b)}}, {"planned", cpuDevice(b)}} {
			s, err := runtime.NewSession(p, []backends.Device{bc.dev})
			require.NoError(b, err)
			name := fmt.Sprintf("O%d/%s", level, bc.name)
			b.Run(name+"/Run", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.Run(ctx, inputs); err != nil {
						b.Fatal(err)
					}
				}
			})
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{4, 10})}
			b.Run(name+"/RunInto", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := s.RunInto(ctx, in, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// Through the whole compiler at -O2 (fusion, folding), RunInto still
// allocates nothing and matches the unoptimized reference.
func TestCompiledModelRunIntoAllocatesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(testing.TB) (*ir.Graph, []*ir.Tensor)
	}{
		{"mlp", func(t testing.TB) (*ir.Graph, []*ir.Tensor) { return mlp(t, ir.Dim{Size: 4}) }},
		{"cnn", cnn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, in := tc.build(t)
			want, err := ref.RunGraph(context.Background(), g, nil, in)
			require.NoError(t, err)
			m, err := weft.New(g, weft.Options{OptLevel: 2})
			require.NoError(t, err)
			var ops []string
			for _, n := range m.Graph.Nodes {
				ops = append(ops, n.Op)
			}
			t.Logf("%s at -O2: %v", tc.name, ops)
			out := []*ir.Tensor{ir.NewTensor(ir.Float32, want[0].Shape)}
			ctx := context.Background()
			require.NoError(t, m.Session.RunInto(ctx, in, out))
			requireNear(t, want[0], out[0])
			allocs := testing.AllocsPerRun(10, func() {
				if err := m.Session.RunInto(ctx, in, out); err != nil {
					panic(err)
				}
			})
			require.Zero(t, allocs)
		})
	}
}

// spanOps counts the node spans of a run by op.
type spanOps struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *spanOps) Span(sp backends.Span) {
	if sp.Kind == backends.SpanNode {
		s.mu.Lock()
		s.n[sp.Node.Op]++
		s.mu.Unlock()
	}
}

// TestPlannedViews: a view op whose input dies at it runs no step (its
// output is planned on the input's bytes), chains of views included, and
// every output still matches the reference; a view whose input lives on
// still copies.
func TestPlannedViews(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	b := ir.NewBuilder("views")
	x := b.Input("x", ir.Float32, ir.S(4, 6))
	s := func(d ...int64) *ir.Value { return b.Const("shape", ir.FromInt64([]int64{int64(len(d))}, d)) }
	a := b.Op("Exp", x)
	v1 := b.Op("Reshape", a, s(2, 12))                              // a dies: a view
	v2 := b.OpA("Unsqueeze", nil, b.Op("Reshape", v1, s(24)), s(0)) // a chain of two views
	w := b.Op("Relu", v2)                                           // [1, 24]
	kept := b.Op("Reshape", w, s(6, 4))                             // w is read again: a copy
	y := b.Op("Add", b.Op("Reshape", b.Op("Sin", w), s(6, 4)), kept)
	b.Output("y", y)
	b.Output("w2", b.Op("Neg", w))
	g, err := b.Build()
	require.NoError(t, err)
	in := []*ir.Tensor{randTensor(r, 4, 6)}
	annotate(t, g, in)
	want, err := ref.RunGraph(context.Background(), g, nil, in)
	require.NoError(t, err)
	sess := session(t, g, cpuDevice(t))
	for range 3 {
		tr := &spanOps{n: map[string]int{}}
		got, err := sess.Run(backends.WithTracer(context.Background(), tr), map[string]*ir.Tensor{"x": in[0]})
		require.NoError(t, err)
		requireNear(t, want[0], got["y"])
		requireNear(t, want[1], got["w2"])
		require.Equal(t, 0, tr.n["Unsqueeze"], "the view of a view runs nothing")
		require.Equal(t, 1, tr.n["Reshape"], "only the reshape of a value read again copies")
	}
}

// TestPlannedNewInputTensors: steps bound to a graph input follow the
// caller to another tensor on the next run.
func TestPlannedNewInputTensors(t *testing.T) {
	g, in := mlp(t, ir.Dim{Size: 4})
	annotate(t, g, in)
	s := session(t, g, cpuDevice(t))
	r := rand.New(rand.NewPCG(31, 32))
	for i := range 4 {
		x := in[0]
		if i%2 == 1 {
			x = randTensor(r, 4, 32)
		}
		want, err := ref.RunGraph(context.Background(), g, nil, []*ir.Tensor{x})
		require.NoError(t, err)
		got, err := s.Run(context.Background(), map[string]*ir.Tensor{"x": x})
		require.NoError(t, err)
		requireNear(t, want[0], got["y"])
	}
}
