package weft

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/passes"
	"github.com/weftrt/weft/zoo"
)

// smallTransformer is a zoo geometry small enough for fast tests.
func smallTransformer(symbolic bool, batch, seq int) zoo.TransformerConfig {
	return zoo.TransformerConfig{Layers: 2, Hidden: 32, Heads: 4, FFN: 64, Seq: seq, Vocab: 50, Batch: batch,
		MaxPositions: 16, TypeVocab: 2, Eps: 1e-5, AttentionMask: true, Symbolic: symbolic, Seed: 7}
}

type zooModel struct {
	name  string
	build func(zoo.TransformerConfig) (*ir.Graph, error)
}

var zooModels = []zooModel{{"gpt", zoo.GPT}, {"bert", zoo.BERT}}

// feeds makes deterministic inputs for the graph's inputs at batch×seq:
// token ids in [0, 50), an attention mask with its last position padded.
func feeds(g *ir.Graph, batch, seq int64) (map[string]*ir.Tensor, []*ir.Tensor) {
	m := map[string]*ir.Tensor{}
	var list []*ir.Tensor
	for _, v := range g.Inputs {
		t := ir.NewTensor(v.DType, []int64{batch, seq})
		for i := 0; i < t.Len(); i++ {
			if v.DType == ir.Int64 {
				t.SetInt64(i, int64((i*7+3)%50))
			} else {
				t.SetFloat64(i, map[bool]float64{true: 0, false: 1}[int64(i)%seq == seq-1 && seq > 1])
			}
		}
		m[v.Name] = t
		list = append(list, t)
	}
	return m, list
}

func requireClose(t *testing.T, want, got *ir.Tensor, what string) {
	t.Helper()
	require.Equal(t, want.Shape, got.Shape, what)
	for i := 0; i < want.Len(); i++ {
		w, g := want.Float64(i), got.Float64(i)
		require.LessOrEqual(t, math.Abs(w-g), 1e-4+1e-3*math.Abs(w), "%s: element %d: want %v, got %v", what, i, w, g)
	}
}

// allStatic reports the first value of g whose shape is not static.
func firstSymbolic(g *ir.Graph) *ir.Value {
	var bad *ir.Value
	g.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			for _, o := range n.Outputs {
				if bad == nil && o != nil && !o.Shape.Static() {
					bad = o
				}
			}
		}
	})
	return bad
}

func TestSpecializeMatchesReferenceAndStatic(t *testing.T) {
	for _, zm := range zooModels {
		t.Run(zm.name, func(t *testing.T) {
			g, err := zm.build(smallTransformer(true, 1, 8))
			require.NoError(t, err)
			m, err := New(g, DefaultOptions())
			require.NoError(t, err)
			defer m.Close()
			require.NotNil(t, m.spec, "a symbolic model gets a specializer")
			require.Equal(t, "batch", m.Inputs()[0].Shape[0].Sym, "Inputs keeps the symbolic dims")
			for i, bind := range [][2]int64{{1, 5}, {2, 7}} {
				b, s := bind[0], bind[1]
				name := fmt.Sprintf("batch=%d seq=%d", b, s)
				orig, err := zm.build(smallTransformer(true, 1, 8)) // unoptimized, symbolic
				require.NoError(t, err)
				in, list := feeds(orig, b, s)
				want, err := ref.RunGraph(context.Background(), orig, nil, list)
				require.NoError(t, err, name)

				got, err := m.Run(context.Background(), in)
				require.NoError(t, err, name)
				requireClose(t, want[0], got[m.OutputNames()[0]], name+": vs the reference evaluator")
				compiled, cached := m.Specialized()
				require.Equal(t, i+1, compiled, name)
				require.Equal(t, i+1, cached, name)
				v := m.spec.variants[0]
				require.NoError(t, v.err)
				require.Nil(t, firstSymbolic(v.model.Graph), "%s: every shape of the variant is static", name)

				sg, err := zm.build(smallTransformer(false, int(b), int(s)))
				require.NoError(t, err)
				sm, err := New(sg, DefaultOptions())
				require.NoError(t, err)
				sout, err := sm.Run(context.Background(), in)
				require.NoError(t, err, name)
				requireClose(t, sout[sm.OutputNames()[0]], got[m.OutputNames()[0]], name+": vs the static model")

				// RunInto with the same binding reuses the variant and
				// allocates no more than the static model does.
				outs := []*ir.Tensor{ir.NewTensor(ir.Float32, want[0].Shape)}
				require.NoError(t, m.RunInto(context.Background(), list, outs))
				requireClose(t, want[0], outs[0], name+": RunInto")
				ctx := context.Background()
				allocs := testing.AllocsPerRun(5, func() { _ = m.RunInto(ctx, list, outs) })
				sallocs := testing.AllocsPerRun(5, func() { _ = sm.RunInto(ctx, list, outs) })
				t.Logf("%s: allocations per warm RunInto: symbolic %v, static %v", name, allocs, sallocs)
				if !raceEnabled {
					require.LessOrEqual(t, allocs, sallocs, name)
				}
				compiled, _ = m.Specialized()
				require.Equal(t, i+1, compiled, "%s: the second run reuses the variant", name)
				require.NoError(t, sm.Close())
			}
		})
	}
}

func TestSpecializeInconsistentBinding(t *testing.T) {
	g, err := zoo.BERT(smallTransformer(true, 1, 8))
	require.NoError(t, err)
	m, err := New(g, DefaultOptions())
	require.NoError(t, err)
	defer m.Close()
	ids := ir.NewTensor(ir.Int64, []int64{1, 5})
	mask := ir.NewTensor(ir.Float32, []int64{1, 6})
	_, err = m.Run(context.Background(), map[string]*ir.Tensor{"input_ids": ids, "attention_mask": mask})
	require.ErrorContains(t, err, `input "attention_mask" dim 1 (seq) is 6, but input "input_ids" dim 1 binds seq=5`)
	out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{1, 5, 32})}
	err = m.RunInto(context.Background(), []*ir.Tensor{ids, mask}, out)
	require.ErrorContains(t, err, "inputs disagree on the symbolic dimension seq")
	// A wrong rank is the session's error, as for a static model.
	_, err = m.Run(context.Background(), map[string]*ir.Tensor{"input_ids": ir.NewTensor(ir.Int64, []int64{5}), "attention_mask": mask})
	require.ErrorContains(t, err, `input "input_ids" has shape [5]`)
	compiled, _ := m.Specialized()
	require.Zero(t, compiled)
}

func TestSpecializeLRU(t *testing.T) {
	g, err := zoo.GPT(smallTransformer(true, 1, 8))
	require.NoError(t, err)
	o := DefaultOptions()
	o.Variants = 2
	m, err := New(g, o)
	require.NoError(t, err)
	defer m.Close()
	run := func(seq int64) {
		in, _ := feeds(g, 1, seq)
		out, err := m.Run(context.Background(), in)
		require.NoError(t, err)
		require.Equal(t, []int64{1, seq, 50}, out["logits"].Shape)
	}
	for _, step := range []struct {
		seq              int64
		compiled, cached int
	}{
		{3, 1, 1}, {4, 2, 2}, {3, 2, 2}, // 3 is cached, now the most recent
		{5, 3, 2}, // evicts 4
		{3, 3, 2}, // still cached
		{4, 4, 2}, // evicted earlier: compiled again (evicts 5)
		{5, 5, 2},
	} {
		run(step.seq)
		c, n := m.Specialized()
		require.Equal(t, step.compiled, c, "after seq=%d", step.seq)
		require.Equal(t, step.cached, n, "after seq=%d", step.seq)
	}
}

func TestSpecializeConcurrent(t *testing.T) {
	g, err := zoo.GPT(smallTransformer(true, 1, 8))
	require.NoError(t, err)
	m, err := New(g, DefaultOptions())
	require.NoError(t, err)
	defer m.Close()
	orig, err := zoo.GPT(smallTransformer(true, 1, 8))
	require.NoError(t, err)
	seqs := []int64{4, 6}
	want := map[int64]*ir.Tensor{}
	for _, s := range seqs {
		_, list := feeds(orig, 1, s)
		out, err := ref.RunGraph(context.Background(), orig, nil, list)
		require.NoError(t, err)
		want[s] = out[0]
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3; i++ {
				s := seqs[(w+i)%2]
				in, list := feeds(g, 1, s)
				var got *ir.Tensor
				if w%2 == 0 {
					out, err := m.Run(context.Background(), in)
					if err != nil {
						errs <- err
						return
					}
					got = out["logits"]
				} else {
					got = ir.NewTensor(ir.Float32, []int64{1, s, 50})
					if err := m.RunInto(context.Background(), list, []*ir.Tensor{got}); err != nil {
						errs <- err
						return
					}
				}
				for j := 0; j < got.Len(); j++ {
					if d := math.Abs(got.Float64(j) - want[s].Float64(j)); d > 1e-4+1e-3*math.Abs(want[s].Float64(j)) {
						errs <- fmt.Errorf("seq %d element %d: got %v, want %v", s, j, got.Float64(j), want[s].Float64(j))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	compiled, cached := m.Specialized()
	require.Equal(t, 2, compiled, "each binding compiles once")
	require.Equal(t, 2, cached)
}

func TestSpecializeFallback(t *testing.T) {
	testBuildHook = func(*ir.Graph) error { return errors.New("injected failure") }
	defer func() { testBuildHook = nil }()
	g, err := zoo.GPT(smallTransformer(true, 1, 8))
	require.NoError(t, err)
	var log bytes.Buffer
	o := DefaultOptions()
	o.SpecializeLog = &log
	m, err := New(g, o)
	require.NoError(t, err)
	defer m.Close()
	orig, err := zoo.GPT(smallTransformer(true, 1, 8))
	require.NoError(t, err)
	in, list := feeds(orig, 1, 5)
	want, err := ref.RunGraph(context.Background(), orig, nil, list)
	require.NoError(t, err)
	for range 2 {
		got, err := m.Run(context.Background(), in)
		require.NoError(t, err)
		requireClose(t, want[0], got["logits"], "generic fallback")
	}
	compiled, _ := m.Specialized()
	require.Equal(t, 1, compiled, "a failure is cached")
	require.Contains(t, log.String(), "shape specialization for batch=1 seq=5 failed, running the generic plan: injected failure")
}

func TestSpecializeDisabledAndStatic(t *testing.T) {
	g, err := zoo.GPT(smallTransformer(true, 1, 8))
	require.NoError(t, err)
	o := DefaultOptions()
	o.Variants = -1
	m, err := New(g, o)
	require.NoError(t, err)
	require.Nil(t, m.spec)
	require.NoError(t, m.Close())
	sg, err := zoo.GPT(smallTransformer(false, 1, 8))
	require.NoError(t, err)
	sm, err := New(sg, DefaultOptions())
	require.NoError(t, err)
	require.Nil(t, sm.spec, "a static model needs no specializer")
	require.NoError(t, sm.Close())
}

func TestBindDims(t *testing.T) {
	g, err := zoo.BERT(smallTransformer(true, 1, 8))
	require.NoError(t, err)
	require.Equal(t, []string{"batch", "seq"}, SymbolicDims(g))
	require.ErrorContains(t, BindDims(g, map[string]int64{"sequence": 4}), "no symbolic dimension sequence (they have: batch, seq)")
	require.NoError(t, BindDims(g, map[string]int64{"batch": 2, "seq": 4}))
	for _, v := range g.Inputs {
		require.Equal(t, ir.S(2, 4), v.Shape, v.Name)
	}
	require.Empty(t, SymbolicDims(g))
}

// renumber rewrites the value IDs (%17) of an IR text in order of first
// appearance.
func renumber(text string) string {
	ids := map[string]string{}
	return regexp.MustCompile(`%[0-9]+\b`).ReplaceAllStringFunc(text, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("%%v%d", len(ids))
		}
		return ids[id]
	})
}

func TestCloneGraph(t *testing.T) {
	g, err := zoo.GPT(smallTransformer(true, 1, 8))
	require.NoError(t, err)
	c := cloneGraph(g)
	require.NoError(t, ir.Verify(c))
	require.Equal(t, renumber(ir.Text(g)), renumber(ir.Text(c)), "the copy prints like the original (value IDs aside)")
	orig := map[*ir.Value]bool{}
	g.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			for _, v := range n.Inputs {
				orig[v] = true
			}
		}
	})
	c.Walk(func(sg *ir.Graph) {
		for _, n := range sg.Nodes {
			for _, v := range n.Inputs {
				require.False(t, v != nil && orig[v], "value %v is shared with the original", v)
			}
		}
	})
}

func TestAlignConsts(t *testing.T) {
	b := ir.NewBuilder("g")
	x := b.Input("x", ir.Float32, ir.Shape{ir.Sym("n"), {Size: 3}})
	buf := make([]byte, 13)
	for i := range buf {
		buf[i] = byte(i)
	}
	w := &ir.Tensor{DType: ir.Float32, Shape: []int64{3}, Data: buf[1:13]}
	require.NotZero(t, uintptr(unsafe.Pointer(&w.Data[0]))%8, "the test wants unaligned data")
	b.Output("y", b.Op("Add", x, b.Const("w", w)))
	g, err := b.Build()
	require.NoError(t, err)
	alignConsts(g)
	require.Zero(t, uintptr(unsafe.Pointer(&w.Data[0]))%8)
	require.Equal(t, buf[1:13], w.Data)
}

func TestSpecializePlan(t *testing.T) {
	for _, zm := range zooModels {
		for _, q := range []string{"", "q8_0"} {
			t.Run(zm.name+"/"+q, func(t *testing.T) {
				g, err := zm.build(smallTransformer(true, 1, 8))
				require.NoError(t, err)
				o := DefaultOptions()
				if q != "" {
					o.Quantize = passes.QuantizeOptions{Type: q, Policy: "all"}
				}
				p, _, err := Compile(g, o)
				require.NoError(t, err)
				path := filepath.Join(t.TempDir(), "m.wplan")
				require.NoError(t, SavePlan(path, p, o, "test"))
				pm, err := OpenPlan(path, Options{})
				require.NoError(t, err)
				defer pm.Close()
				require.NotNil(t, pm.spec)
				// The generic plan is the reference here: same weights (quantized
				// or not), the same optimized graph, run on symbolic shapes.
				gm, err := OpenPlan(path, Options{Variants: -1})
				require.NoError(t, err)
				defer gm.Close()
				for i, seq := range []int64{5, 8} {
					in, _ := feeds(g, 2, seq)
					want, err := gm.Run(context.Background(), in)
					require.NoError(t, err)
					got, err := pm.Run(context.Background(), in)
					require.NoError(t, err)
					name := pm.OutputNames()[0]
					if q == "" {
						requireClose(t, want[name], got[name], fmt.Sprintf("seq %d: vs the generic plan", seq))
					}
					// A plan compiled for this binding (weft compile --dim): the
					// same kernels, q8_0 activations included.
					sg, err := zm.build(smallTransformer(true, 1, 8))
					require.NoError(t, err)
					require.NoError(t, BindDims(sg, map[string]int64{"batch": 2, "seq": seq}))
					sp, _, err := Compile(sg, o)
					require.NoError(t, err)
					spath := filepath.Join(t.TempDir(), "s.wplan")
					require.NoError(t, SavePlan(spath, sp, o, "test"))
					sm, err := OpenPlan(spath, Options{})
					require.NoError(t, err)
					swant, err := sm.Run(context.Background(), in)
					require.NoError(t, err)
					require.NoError(t, sm.Close())
					requireClose(t, swant[name], got[name], fmt.Sprintf("seq %d: vs the static plan", seq))
					compiled, _ := pm.Specialized()
					require.Equal(t, i+1, compiled)
					v := pm.spec.variants[0]
					require.NoError(t, v.err)
					require.Nil(t, firstSymbolic(v.model.Graph), "every shape of the variant is static")
				}
			})
		}
	}
}

func TestSpecializeUnnamedDims(t *testing.T) {
	build := func() *ir.Graph {
		b := ir.NewBuilder("g")
		x := b.Input("x", ir.Float32, ir.Shape{{Size: -1}, {Size: 3}})
		y := b.Input("y", ir.Float32, ir.Shape{{Size: -1}, {Size: 3}})
		b.Output("z", b.Op("Mul", b.Op("Add", x, b.Const("w", ir.FromFloat64(ir.Float32, []int64{3}, []float64{1, 2, 3}))), y))
		g, err := b.Build()
		require.NoError(t, err)
		return g
	}
	m, err := New(build(), DefaultOptions())
	require.NoError(t, err)
	defer m.Close()
	// Two unnamed unknown dims are separate symbols: 4 and 1 broadcast.
	x := ir.FromFloat64(ir.Float32, []int64{4, 3}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	y := ir.FromFloat64(ir.Float32, []int64{1, 3}, []float64{2, -1, 0.5})
	want, err := ref.RunGraph(context.Background(), build(), nil, []*ir.Tensor{x, y})
	require.NoError(t, err)
	got, err := m.Run(context.Background(), map[string]*ir.Tensor{"x": x, "y": y})
	require.NoError(t, err)
	requireClose(t, want[0], got["z"], "x[4,3] y[1,3]")
	compiled, _ := m.Specialized()
	require.Equal(t, 1, compiled)
	require.NoError(t, m.spec.variants[0].err)
	require.Equal(t, "x[0]=4 y[0]=1", m.spec.describe(m.spec.variants[0].key))
}
