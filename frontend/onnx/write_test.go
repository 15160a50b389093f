package onnx

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// equivalent reports the first difference between two graphs: inputs and
// outputs (names, dtypes, shapes), nodes pairwise (op, attributes, which
// values they read), constants by content. Values are matched structurally,
// so renamed values and constants do not count as differences.
func equivalent(a, b *ir.Graph) error {
	return (&matcher{m: map[*ir.Value]*ir.Value{}}).graphs(a, b)
}

type matcher struct{ m map[*ir.Value]*ir.Value }

func (mt *matcher) graphs(a, b *ir.Graph) error {
	if len(a.Inputs) != len(b.Inputs) {
		return fmt.Errorf("graph %q: %d inputs vs %d", a.Name, len(a.Inputs), len(b.Inputs))
	}
	for i := range a.Inputs {
		if err := sameType(a.Inputs[i], b.Inputs[i], a.Parent == nil); err != nil {
			return fmt.Errorf("graph %q: input %d: %w", a.Name, i, err)
		}
		mt.m[a.Inputs[i]] = b.Inputs[i]
	}
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Errorf("graph %q: %d nodes vs %d", a.Name, len(a.Nodes), len(b.Nodes))
	}
	for i, na := range a.Nodes {
		nb := b.Nodes[i]
		if err := mt.nodes(na, nb); err != nil {
			return fmt.Errorf("graph %q: node %d %v: %w", a.Name, i, na, err)
		}
	}
	if len(a.Outputs) != len(b.Outputs) {
		return fmt.Errorf("graph %q: %d outputs vs %d", a.Name, len(a.Outputs), len(b.Outputs))
	}
	for i := range a.Outputs {
		if err := mt.value(a.Outputs[i], b.Outputs[i]); err != nil {
			return fmt.Errorf("graph %q: output %d: %w", a.Name, i, err)
		}
		if err := sameType(a.Outputs[i], b.Outputs[i], a.Parent == nil); err != nil {
			return fmt.Errorf("graph %q: output %d: %w", a.Name, i, err)
		}
	}
	return nil
}

// sameType compares graph inputs and outputs; the top-level graph's keep
// their names (a subgraph's are positional and may be renamed).
func sameType(a, b *ir.Value, named bool) error {
	if named && a.Name != "" && a.Name != b.Name {
		return fmt.Errorf("name %q vs %q", a.Name, b.Name)
	}
	if a.DType != b.DType || !a.Shape.Equal(b.Shape) {
		return fmt.Errorf("%v[%v] vs %v[%v]", a.DType, a.Shape, b.DType, b.Shape)
	}
	return nil
}

func (mt *matcher) nodes(a, b *ir.Node) error {
	if a.Op != b.Op {
		return fmt.Errorf("op %s vs %s", a.Op, b.Op)
	}
	if countInputs(a.Inputs) != countInputs(b.Inputs) {
		return fmt.Errorf("%d inputs vs %d", countInputs(a.Inputs), countInputs(b.Inputs))
	}
	for i := 0; i < countInputs(a.Inputs); i++ {
		if err := mt.value(a.Inputs[i], b.Inputs[i]); err != nil {
			return fmt.Errorf("input %d: %w", i, err)
		}
	}
	if len(a.Attrs) != len(b.Attrs) {
		return fmt.Errorf("attributes %v vs %v", a.Attrs.Names(), b.Attrs.Names())
	}
	for _, k := range a.Attrs.Names() {
		if err := mt.attrs(a.Attrs[k], b.Attrs[k]); err != nil {
			return fmt.Errorf("attribute %s: %w", k, err)
		}
	}
	if len(a.Outputs) != len(b.Outputs) {
		return fmt.Errorf("%d outputs vs %d", len(a.Outputs), len(b.Outputs))
	}
	for i := range a.Outputs {
		oa, ob := a.Outputs[i], b.Outputs[i]
		if oa.DType != ob.DType || !oa.Shape.Equal(ob.Shape) {
			return fmt.Errorf("output %d: %v[%v] vs %v[%v]", i, oa.DType, oa.Shape, ob.DType, ob.Shape)
		}
		mt.m[oa] = ob
	}
	return nil
}

func (mt *matcher) value(a, b *ir.Value) error {
	switch {
	case a == nil || b == nil:
		if a != b {
			return fmt.Errorf("%v vs %v", a, b)
		}
		return nil
	case a.IsConst():
		if !b.IsConst() {
			return fmt.Errorf("constant vs %v", b)
		}
		return sameTensor(a.Const, b.Const)
	case mt.m[a] != b:
		return fmt.Errorf("reads %v, want the counterpart of %v", b, a)
	}
	return nil
}

func sameTensor(a, b *ir.Tensor) error {
	if a.DType != b.DType || !ir.ShapeOf(a.Shape).Equal(ir.ShapeOf(b.Shape)) || !bytes.Equal(a.Data, b.Data) {
		return fmt.Errorf("tensor %v differs from %v (or its data does)", a, b)
	}
	return nil
}

func (mt *matcher) attrs(a, b *ir.Attr) error {
	if b == nil || a.Kind != b.Kind {
		return fmt.Errorf("%v vs %v", a, b)
	}
	switch a.Kind {
	case ir.AttrTensor:
		return sameTensor(a.Tensor, b.Tensor)
	case ir.AttrGraph:
		return mt.graphs(a.Graph, b.Graph)
	case ir.AttrGraphs:
		if len(a.Graphs) != len(b.Graphs) {
			return fmt.Errorf("%d graphs vs %d", len(a.Graphs), len(b.Graphs))
		}
		for i := range a.Graphs {
			if err := mt.graphs(a.Graphs[i], b.Graphs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		return fmt.Errorf("%v vs %v", a, b)
	}
	return nil
}

// roundTrip writes g at opset, parses the bytes and checks the result is
// equivalent to g.
func roundTrip(t *testing.T, g *ir.Graph, opset int64) *ir.Graph {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, g, opset))
	m, err := Parse(buf.Bytes(), "")
	require.NoError(t, err)
	require.Equal(t, opset, m.Graph.Opsets[""])
	require.Equal(t, irVersionFor(opset), m.IRVersion)
	require.NoError(t, equivalent(g, m.Graph))
	return m.Graph
}

func f32s(n int, f func(i int) float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// attrGraph covers every attribute kind the IR has an ONNX op for, symbolic
// and static shapes, omitted optional inputs in the middle of the input
// list, and constants of several dtypes.
func attrGraph() *ir.Graph {
	b := ir.NewBuilder("kinds")
	x := b.Input("x", ir.Float32, ir.Shape{ir.Sym("batch"), {Size: 3}, {Size: 4}, {Size: 4}})
	w := b.Const("w", ir.FromFloat32([]int64{2, 3, 3, 3}, f32s(54, func(i int) float32 { return float32(i%7) - 3 })))
	c := b.OpA("Conv", []ir.AttrOption{ir.Ints("kernel_shape", 3, 3), ir.Ints("pads", 1, 1, 1, 1),
		ir.Ints("strides", 1, 1), ir.Int("group", 1), ir.Str("auto_pad", "NOTSET")}, x, w)
	c.DType, c.Shape = ir.Float32, ir.Shape{ir.Sym("batch"), {Size: 2}, {Size: 4}, {Size: 4}}
	lr := b.OpA("LeakyRelu", []ir.AttrOption{ir.Float("alpha", 0.25)}, c)
	hi := b.Const("hi", ir.FromFloat32([]int64{}, []float32{2}))
	cl := b.Op("Clip", lr, nil, hi) // min omitted, max given
	cs := b.OpA("ConstantOfShape", []ir.AttrOption{ir.TensorAttr("value", ir.FromFloat64(ir.Float16, []int64{1}, []float64{1.5}))},
		b.Const("shp", ir.FromInt64([]int64{2}, []int64{4, 4})))
	mask := b.Const("mask", ir.FromFloat64(ir.Bool, []int64{4}, []float64{1, 0, 1, 1}))
	cast := b.OpA("Cast", []ir.AttrOption{ir.Int("to", int64(dtFloat))}, cs)
	wh := b.Op("Where", mask, cast, b.Const("zero", ir.FromFloat32([]int64{}, []float32{0})))
	y := b.Op("Add", cl, wh)
	rm := b.OpA("ReduceMean", []ir.AttrOption{ir.Int("keepdims", 1)}, y, b.Const("axes", ir.FromInt64([]int64{1}, []int64{-1})))
	b.Output("y", rm)
	// An If whose branches read outer values and have their own constants.
	cond := b.Input("cond", ir.Bool, ir.Scalar())
	thenG := b.G.NewSubgraph("then")
	tc := thenG.AddConst("three", ir.FromFloat32([]int64{}, []float32{3}))
	tn := thenG.AddNode("Mul", "", []*ir.Value{rm, tc}, 1, nil)
	thenG.Outputs = append(thenG.Outputs, tn.Outputs[0])
	elseG := b.G.NewSubgraph("else")
	en := elseG.AddNode("Neg", "", []*ir.Value{rm}, 1, nil)
	elseG.Outputs = append(elseG.Outputs, en.Outputs[0])
	z := b.OpA("If", []ir.AttrOption{ir.GraphAttr("then_branch", thenG), ir.GraphAttr("else_branch", elseG)}, cond)
	b.Output("z", z)
	// floats and strings attributes.
	pool := b.OpA("MaxPool", []ir.AttrOption{ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2)}, x)
	rs := b.OpA("Resize", []ir.AttrOption{ir.Str("mode", "nearest"), ir.Str("coordinate_transformation_mode", "asymmetric"),
		ir.Str("nearest_mode", "floor")}, pool, nil, b.Const("scales", ir.FromFloat32([]int64{4}, []float32{1, 1, 2, 2})))
	lstmX := b.Input("seq", ir.Float32, ir.S(5, 1, 2))
	lstmW := b.Const("W", ir.FromFloat32([]int64{1, 12, 2}, f32s(24, func(i int) float32 { return float32(i) / 24 })))
	lstmR := b.Const("R", ir.FromFloat32([]int64{1, 12, 3}, f32s(36, func(i int) float32 { return float32(i) / 36 })))
	outs := b.OpN("LSTM", 3, []ir.AttrOption{ir.Int("hidden_size", 3), ir.Floats("activation_alpha", 1, 1, 1),
		func(a ir.Attrs) {
			a["activations"] = &ir.Attr{Kind: ir.AttrStrings, Strings: []string{"Sigmoid", "Tanh", "Tanh"}}
		}}, lstmX, lstmW, lstmR)
	b.Output("pooled", rs)
	b.Output("lstm_y", outs[0])
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

func TestWriteRoundTrip(t *testing.T) {
	for _, opset := range []int64{13, 17, 18, 21} {
		t.Run(fmt.Sprint(opset), func(t *testing.T) {
			g := roundTrip(t, attrGraph(), opset)
			require.Equal(t, "batch", g.Inputs[0].Shape[0].Sym)
			// The ReduceMean axes are an attribute below 18 and an input from 18:
			// the importer restores the input either way (checked by roundTrip).
			require.Equal(t, "ReduceMean", g.Nodes[7].Op)
		})
	}
}

// TestWriteReduceForm checks the ReduceMean encoding per opset on the wire.
func TestWriteReduceForm(t *testing.T) {
	b := ir.NewBuilder("r")
	x := b.Input("x", ir.Float32, ir.S(2, 3))
	b.Output("y", b.Op("ReduceMax", x, b.Const("axes", ir.FromInt64([]int64{1}, []int64{1}))))
	b.Output("all", b.Op("ReduceMin", x))
	g, err := b.Build()
	require.NoError(t, err)
	for _, tc := range []struct {
		opset  int64
		inputs int
		attr   bool
	}{{17, 1, true}, {18, 2, false}} {
		data, err := Marshal(g, tc.opset)
		require.NoError(t, err)
		mp, err := decodeModel(data)
		require.NoError(t, err)
		n := mp.graph.nodes[0]
		require.Len(t, n.inputs, tc.inputs, "opset %d", tc.opset)
		require.Equal(t, tc.attr, len(n.attrs) == 1, "opset %d", tc.opset)
		require.Len(t, mp.graph.inits, tc.inputs-1, "opset %d: the axes constant is written only as an input", tc.opset)
		require.Len(t, mp.graph.nodes[1].inputs, 1)
		roundTrip(t, g, tc.opset)
	}
}

// TestWriteValueInfo checks that inferred intermediate types are written and
// read back, and that unknown ones are left out.
func TestWriteValueInfo(t *testing.T) {
	b := ir.NewBuilder("vi")
	x := b.Input("x", ir.Float16, ir.Shape{ir.Sym("n"), {Size: -1}, {Size: 2}})
	r := b.Op("Relu", x)
	r.DType, r.Shape = ir.Float16, x.Shape.Clone()
	s := b.Op("Sigmoid", r) // left untyped
	b.Output("y", b.Op("Neg", s))
	g, err := b.Build()
	require.NoError(t, err)
	data, err := Marshal(g, 17)
	require.NoError(t, err)
	mp, err := decodeModel(data)
	require.NoError(t, err)
	require.Len(t, mp.graph.valueInfo, 1)
	vi := mp.graph.valueInfo[0]
	require.Equal(t, int32(dtFloat16), vi.typ.elemType)
	require.Equal(t, []dimProto{{param: "n"}, {}, {value: 2, hasValue: true}}, vi.typ.shape)
	roundTrip(t, g, 17)
}

// TestWriteNames checks that clashing and missing names are made unique and
// that inputs and outputs keep theirs.
func TestWriteNames(t *testing.T) {
	b := ir.NewBuilder("names")
	x := b.Input("x", ir.Float32, ir.S(2))
	one := b.Const("x", ir.FromFloat32([]int64{2}, []float32{1, 2})) // clashes with the input
	a := b.Op("Add", x, one)
	a.Name = "y" // clashes with the output below
	b.Output("y", b.Op("Abs", a))
	g, err := b.Build()
	require.NoError(t, err)
	data, err := Marshal(g, 17)
	require.NoError(t, err)
	mp, err := decodeModel(data)
	require.NoError(t, err)
	require.Equal(t, "x", mp.graph.inputs[0].name)
	require.Equal(t, "y", mp.graph.outputs[0].name)
	require.Equal(t, "x_1", mp.graph.inits[0].name)
	require.Equal(t, []string{"y_1"}, mp.graph.nodes[0].outputs)
	roundTrip(t, g, 17)
}

func TestWriteLoop(t *testing.T) {
	b := ir.NewBuilder("loop")
	x := b.Input("x", ir.Float32, ir.S(3))
	trip := b.Const("trip", ir.FromInt64([]int64{}, []int64{4}))
	body := b.G.NewSubgraph("body")
	it := body.AddInput("i", ir.Int64, ir.Scalar())
	cin := body.AddInput("cond_in", ir.Bool, ir.Scalar())
	acc := body.AddInput("acc", ir.Float32, ir.S(3))
	_ = it
	add := body.AddNode("Add", "", []*ir.Value{acc, x}, 1, nil)
	cout := body.AddNode("Identity", "", []*ir.Value{cin}, 1, nil)
	body.Outputs = []*ir.Value{cout.Outputs[0], add.Outputs[0]}
	n := b.G.AddNode("Loop", "loop", []*ir.Value{trip, nil, x}, 1, ir.Attrs{"body": {Kind: ir.AttrGraph, Graph: body}})
	b.Output("y", n.Outputs[0])
	g, err := b.Build()
	require.NoError(t, err)
	roundTrip(t, g, 17)
}

func TestWriteErrors(t *testing.T) {
	build := func(f func(b *ir.Builder, x *ir.Value) *ir.Value) *ir.Graph {
		b := ir.NewBuilder("bad")
		x := b.Input("x", ir.Float32, ir.S(2, 32))
		b.Output("y", f(b, x))
		return b.G
	}
	for _, tc := range []struct {
		name    string
		g       *ir.Graph
		opset   int64
		want    string
		unsupp  bool
		nothing bool
	}{
		{"weft op", build(func(b *ir.Builder, x *ir.Value) *ir.Value { return b.Op("SiLU", x) }), 17, `op SiLU is weft's own`, true, false},
		{"fused matmul", build(func(b *ir.Builder, x *ir.Value) *ir.Value { return b.Op("FusedMatMul", x, x) }), 17, `FusedMatMul`, true, false},
		{"unknown op", build(func(b *ir.Builder, x *ir.Value) *ir.Value { return b.Op("Frobnicate", x) }), 17, `op Frobnicate is not an ONNX operator`, true, false},
		{"too new op", build(func(b *ir.Builder, x *ir.Value) *ir.Value { return b.Op("Gelu", x) }), 17, `op Gelu in this form needs opset >= 20`, true, false},
		{"legacy axis", build(func(b *ir.Builder, x *ir.Value) *ir.Value {
			return b.OpA("Softmax", []ir.AttrOption{ir.Int("axis", 1), ir.Int("legacy_axis", 1)}, x)
		}), 17, `attribute legacy_axis`, true, false},
		{"runtime axes", build(func(b *ir.Builder, x *ir.Value) *ir.Value {
			return b.Op("ReduceMean", x, b.Op("Shape", x))
		}), 17, `axes computed at run time`, true, false},
		{"quantized const", build(func(b *ir.Builder, x *ir.Value) *ir.Value {
			return b.Op("MatMul", x, b.Const("wq", ir.NewTensor(ir.Q8_0, []int64{32, 32})))
		}), 17, `q8_0 tensors have no ONNX type`, true, false},
		{"new attribute", build(func(b *ir.Builder, x *ir.Value) *ir.Value {
			return b.OpA("Cast", []ir.AttrOption{ir.Int("to", 10), ir.Int("saturate", 1)}, x)
		}), 17, `attribute saturate needs opset >= 19`, true, false},
		{"opset too old", build(func(b *ir.Builder, x *ir.Value) *ir.Value { return b.Op("Relu", x) }), 12, `opset 12`, true, false},
		{"opset too new", build(func(b *ir.Builder, x *ir.Value) *ir.Value { return b.Op("Relu", x) }), 22, `opset 22`, true, false},
		{"not verified", func() *ir.Graph {
			g := build(func(b *ir.Builder, x *ir.Value) *ir.Value { return b.Op("Relu", x) })
			g.Outputs = append(g.Outputs, ir.NewGraph("other").AddInput("z", ir.Float32, ir.S(1)))
			return g
		}(), 17, `does not verify`, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, tc.g, tc.opset)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), `onnx: write "bad"`)
			require.Equal(t, tc.unsupp, errors.Is(err, ir.ErrUnsupported), "%v", err)
			require.Zero(t, buf.Len(), "nothing is written on error")
		})
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	g := attrGraph()
	require.NoError(t, WriteFile(path, g, 17))
	m, err := Load(path)
	require.NoError(t, err)
	defer m.Close()
	require.NoError(t, equivalent(g, m.Graph))
	// A failed write leaves no file behind.
	bad := filepath.Join(dir, "bad.onnx")
	b := ir.NewBuilder("bad")
	b.Output("y", b.Op("SiLU", b.Input("x", ir.Float32, ir.S(1))))
	require.Error(t, WriteFile(bad, b.G, 17))
	_, err = os.Stat(bad)
	require.True(t, os.IsNotExist(err))
}

// TestWriteLargeConst checks that big tensors (streamed as their own
// segments) come back intact and that Write and Marshal agree.
func TestWriteLargeConst(t *testing.T) {
	b := ir.NewBuilder("big")
	x := b.Input("x", ir.Float32, ir.S(1, 300))
	w := b.Const("w", ir.FromFloat32([]int64{300, 300}, f32s(90000, func(i int) float32 { return float32(i%1013) * 0.001 })))
	b.Output("y", b.Op("MatMul", x, w))
	g, err := b.Build()
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, g, 17))
	data, err := Marshal(g, 17)
	require.NoError(t, err)
	require.Equal(t, data, buf.Bytes())
	roundTrip(t, g, 17)
}

// TestWriteSubgraphOuterOutput: a branch that returns an outer value (or a
// constant) is written with an Identity inside the branch, which is what
// the importer makes of such a branch anyway.
func TestWriteSubgraphOuterOutput(t *testing.T) {
	b := ir.NewBuilder("outer")
	x := b.Input("x", ir.Float32, ir.S(2))
	cond := b.Input("cond", ir.Bool, ir.Scalar())
	r := b.Op("Relu", x)
	r.DType, r.Shape = ir.Float32, ir.S(2)
	thenG := b.G.NewSubgraph("then")
	thenG.Outputs = []*ir.Value{r}
	elseG := b.G.NewSubgraph("else")
	k := elseG.AddConst("k", ir.FromFloat32([]int64{2}, []float32{7, 8}))
	elseG.Outputs = []*ir.Value{k}
	y := b.OpA("If", []ir.AttrOption{ir.GraphAttr("then_branch", thenG), ir.GraphAttr("else_branch", elseG)}, cond)
	b.Output("y", y)
	g, err := b.Build()
	require.NoError(t, err)
	data, err := Marshal(g, 17)
	require.NoError(t, err)
	m, err := Parse(data, "")
	require.NoError(t, err)
	ifNode := m.Graph.Nodes[1]
	require.Equal(t, "If", ifNode.Op)
	for _, br := range []string{"then_branch", "else_branch"} {
		sg := ifNode.AttrGraph(br)
		require.Len(t, sg.Nodes, 1, br)
		require.Equal(t, "Identity", sg.Nodes[0].Op, br)
		require.Equal(t, sg.Outputs[0], sg.Nodes[0].Outputs[0], br)
	}
	require.Equal(t, m.Graph.Nodes[0].Outputs[0], ifNode.AttrGraph("then_branch").Nodes[0].Inputs[0])
	require.Equal(t, []float32{7, 8}, ifNode.AttrGraph("else_branch").Nodes[0].Inputs[0].Const.Float32s())
}

func TestWriteNilGraph(t *testing.T) {
	_, err := Marshal(nil, 17)
	require.ErrorContains(t, err, `onnx: write "<nil>": nil graph`)
	require.ErrorContains(t, Write(&bytes.Buffer{}, nil, 17), "nil graph")
}

// FuzzWriteRoundTrip: whatever Parse accepts, Write either refuses as
// unsupported or writes so that Parse gives an equivalent graph back.
func FuzzWriteRoundTrip(f *testing.F) {
	for _, s := range parseSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, "")
		if err != nil {
			return
		}
		out, err := Marshal(m.Graph, 17)
		if err != nil {
			if errors.Is(err, ir.ErrUnsupported) {
				return
			}
			t.Fatalf("write: %v", err)
		}
		back, err := Parse(out, "")
		if err != nil {
			t.Fatalf("written model does not import: %v", err)
		}
		if err := equivalent(m.Graph, back.Graph); err != nil {
			t.Fatalf("written model differs: %v", err)
		}
	})
}
