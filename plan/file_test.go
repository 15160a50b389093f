package plan_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
	"github.com/weftrt/weft/plan"
)

// samplePlan builds, by hand, a plan that exercises every part of the
// format: opsets and graph metadata, symbolic and unknown shapes, omitted
// inputs, every attribute kind, tensor attributes, nested subgraphs reading
// outer values, a block-quantized constant, an empty constant, two constants
// sharing bytes, and a memory plan with an in-place buffer.
func samplePlan(t testing.TB) *plan.Plan {
	g := ir.NewGraph("main")
	g.Opsets = map[string]int64{"": 17, "com.microsoft": 1}
	g.Meta = map[string]string{"producer_name": "test", "doc": "a model"}
	cond := g.AddInput("cond", ir.Bool, ir.Scalar())
	x := g.AddInput("x", ir.Float32, ir.Shape{ir.Sym("batch"), {Size: 4}})
	w := g.AddConst("w", ir.FromFloat32([]int64{4, 2}, []float32{1, -2, 3.5, 4, 5, 6, 7, float32(math.Inf(1))}))
	wflat := g.AddConst("w_flat", &ir.Tensor{DType: ir.Float32, Shape: []int64{8}, Data: w.Const.Data})
	qt := ir.NewTensor(ir.Q8_0, []int64{2, 32})
	for i := range qt.Data {
		qt.Data[i] = byte(i*7 + 3)
	}
	q := g.AddConst("q", qt)
	empty := g.AddConst("empty", ir.NewTensor(ir.Int64, []int64{0, 3}))

	mm := g.AddNode("MatMul", "mm", []*ir.Value{x, w}, 1, nil)
	mm.Outputs[0].DType, mm.Outputs[0].Shape = ir.Float32, ir.Shape{ir.Sym("batch"), {Size: 2}}
	attrs := ir.Attrs{
		"i":  {Kind: ir.AttrInt, Int: -7},
		"f":  {Kind: ir.AttrFloat, Float: float32(math.NaN())},
		"s":  {Kind: ir.AttrString, Str: "héllo\x00"},
		"is": {Kind: ir.AttrInts, Ints: []int64{1, -1, math.MaxInt64}},
		"fs": {Kind: ir.AttrFloats, Floats: []float32{0.5, -0}},
		"ss": {Kind: ir.AttrStrings, Strings: []string{"a", ""}},
		"t":  {Kind: ir.AttrTensor, Tensor: ir.FromInt64([]int64{2}, []int64{3, 4})},
	}
	custom := g.AddNode("Custom", "attrs", []*ir.Value{mm.Outputs[0], nil, q, empty, wflat}, 2, attrs)

	// If whose then-branch holds a Loop-like node with a body of its own.
	then := g.NewSubgraph("then")
	inner := then.NewSubgraph("inner")
	ib := inner.AddNode("Neg", "", []*ir.Value{x}, 1, nil) // reads the top-level x
	inner.Outputs = []*ir.Value{ib.Outputs[0]}
	tc := then.AddConst("k", ir.FromFloat32([]int64{1}, []float32{2}))
	tn := then.AddNode("Mul", "", []*ir.Value{custom.Outputs[0], tc}, 1, nil)
	wrap := then.AddNode("Wrap", "", nil, 1, ir.Attrs{"bodies": {Kind: ir.AttrGraphs, Graphs: []*ir.Graph{inner}}})
	then.Outputs = []*ir.Value{tn.Outputs[0], wrap.Outputs[0]}
	els := g.NewSubgraph("else")
	en := els.AddNode("Identity", "", []*ir.Value{x}, 1, nil)
	els.Outputs = []*ir.Value{en.Outputs[0], x}
	ifn := g.AddNode("If", "branch", []*ir.Value{cond}, 2, ir.Attrs{
		"then_branch": {Kind: ir.AttrGraph, Graph: then},
		"else_branch": {Kind: ir.AttrGraph, Graph: els},
	})
	relu := g.AddNode("Relu", "", []*ir.Value{ifn.Outputs[0]}, 1, nil)
	neg := g.AddNode("Neg", "", []*ir.Value{relu.Outputs[0]}, 1, nil)
	g.Outputs = []*ir.Value{neg.Outputs[0], custom.Outputs[1], ifn.Outputs[1]}
	require.NoError(t, ir.Verify(g))

	p := &plan.Plan{Graph: g,
		Partitions: []*plan.Partition{
			{Index: 0, Device: "cpu", Nodes: g.Nodes[:2], Causes: []string{"default device", "inputs live on cpu"},
				Inputs: []*ir.Value{x, w, q, empty, wflat}, Outputs: []*ir.Value{custom.Outputs[0], custom.Outputs[1]}},
			{Index: 1, Device: "other:0", Nodes: g.Nodes[2:],
				Inputs: []*ir.Value{cond, custom.Outputs[0], x}, Outputs: []*ir.Value{neg.Outputs[0], ifn.Outputs[1]}},
		},
		Arenas: []plan.Arena{{Device: "cpu", Size: 128}, {Device: "other:0", Size: 64}},
	}
	// A valid memory plan: graph outputs unplanned, relu in place of its input.
	p.Buffers = []plan.Buffer{
		{Value: mm.Outputs[0], Device: "cpu", Bytes: 32, Arena: 0, Offset: 0},
		{Value: custom.Outputs[0], Device: "cpu", Bytes: 32, Arena: 0, Offset: 64},
		{Value: custom.Outputs[1], Device: "cpu", Bytes: -1, Offset: -1},
		{Value: ifn.Outputs[0], Device: "other:0", Bytes: 32, Arena: 1, Offset: 0},
		{Value: ifn.Outputs[1], Device: "other:0", Bytes: 16, Offset: -1},
		{Value: relu.Outputs[0], Device: "other:0", Bytes: 32, Arena: 1, Offset: 0, InPlaceOf: ifn.Outputs[0]},
		{Value: neg.Outputs[0], Device: "other:0", Bytes: 32, Offset: -1},
	}
	require.NoError(t, p.Verify())
	return p
}

var sampleMeta = map[string]string{"producer": "weft", "options": "-O2", "source": "model.onnx"}

func encode(t testing.TB, p *plan.Plan) []byte {
	var buf bytes.Buffer
	require.NoError(t, plan.Write(&buf, p, sampleMeta))
	return buf.Bytes()
}

// byID renders a value for comparisons across two graphs.
func byID(v *ir.Value) string {
	if v == nil {
		return "nil"
	}
	return v.String()
}

func TestRoundTrip(t *testing.T) {
	p := samplePlan(t)
	data := encode(t, p)
	f, err := plan.Decode(data, "sample.wplan")
	require.NoError(t, err)
	q := f.Plan

	require.Equal(t, sampleMeta, f.Meta)
	require.Equal(t, ir.Text(p.Graph), ir.Text(q.Graph))
	require.Equal(t, p.Text(), q.Text())
	require.Equal(t, p.Graph.Opsets, q.Graph.Opsets)
	require.Equal(t, p.Graph.Meta, q.Graph.Meta)
	require.Equal(t, p.Arenas, q.Arenas)
	require.Len(t, q.Buffers, len(p.Buffers))
	for i, b := range p.Buffers {
		c := q.Buffers[i]
		require.Equal(t, byID(b.Value), byID(c.Value))
		require.Equal(t, byID(b.InPlaceOf), byID(c.InPlaceOf))
		require.Equal(t, []any{b.Device, b.Bytes, b.Arena, b.Offset}, []any{c.Device, c.Bytes, c.Arena, c.Offset})
	}
	for i, part := range p.Partitions {
		qp := q.Partitions[i]
		require.Equal(t, part.Causes, qp.Causes)
		for k, v := range part.Inputs {
			require.Equal(t, byID(v), byID(qp.Inputs[k]))
		}
		for k, v := range part.Outputs {
			require.Equal(t, byID(v), byID(qp.Outputs[k]))
		}
		for k, n := range part.Nodes {
			require.Same(t, q.Graph.Nodes[indexOf(p.Graph.Nodes, n)], qp.Nodes[k])
		}
	}

	// Attributes survive bit for bit (NaN payload, -0, the tensor).
	pa, qa := p.Graph.Nodes[1].Attrs, q.Graph.Nodes[1].Attrs
	require.Equal(t, math.Float32bits(pa["f"].Float), math.Float32bits(qa["f"].Float))
	require.Equal(t, math.Float32bits(pa["fs"].Floats[1]), math.Float32bits(qa["fs"].Floats[1]))
	require.Equal(t, pa["is"].Ints, qa["is"].Ints)
	require.Equal(t, pa["s"].Str, qa["s"].Str)
	require.Equal(t, pa["ss"].Strings, qa["ss"].Strings)
	require.Equal(t, []int64{3, 4}, qa["t"].Tensor.Int64s())

	// Subgraph structure: parents, outer references, producers.
	qthen := q.Graph.Nodes[2].AttrGraph("then_branch")
	require.Same(t, q.Graph, qthen.Parent)
	qinner := qthen.Nodes[1].Attrs["bodies"].Graphs[0]
	require.Same(t, qthen, qinner.Parent)
	require.Same(t, q.Graph.Inputs[1], qinner.Nodes[0].Inputs[0])
	for _, n := range q.Graph.Nodes {
		for _, o := range n.Outputs {
			require.Same(t, n, o.Producer)
		}
	}
	require.Nil(t, q.Graph.Nodes[1].Inputs[1])

	// Constants: same bytes, zero-copy slices of the file, 64-byte aligned
	// within it, and aliased bytes stored once.
	in := func(b []byte) bool {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		return p >= base && p+uintptr(len(b)) <= base+uintptr(len(data)) && (p-base)%64 == 0
	}
	for i, c := range p.Graph.Consts {
		qc := q.Graph.Consts[i]
		require.Equal(t, c.Const.DType, qc.Const.DType)
		require.Equal(t, c.Const.Shape, qc.Const.Shape)
		require.Equal(t, c.Const.Data, qc.Const.Data)
		if len(c.Const.Data) > 0 {
			require.True(t, in(qc.Const.Data), "const %v is not a slice of the file", qc)
		}
	}
	require.Equal(t, unsafe.SliceData(q.Graph.Consts[0].Const.Data), unsafe.SliceData(q.Graph.Consts[1].Const.Data))
	// w (32 B) at 0, q (68 B) at 64, the t attribute (16 B) at 192, the
	// subgraph's k (4 B) at 256; w_flat shares w's bytes, empty has none.
	require.Equal(t, int64(256+4), f.WeightBytes)
	require.NoError(t, f.VerifyWeights())

	// Writing the decoded plan gives the same bytes.
	require.Equal(t, data, encode(t, q))
}

func indexOf(nodes []*ir.Node, n *ir.Node) int {
	for i, m := range nodes {
		if m == n {
			return i
		}
	}
	return -1
}

// TestValueIDsRenumbered: ids that passes dropped leave no gaps in the
// opened graph; the relative order of ids is kept.
func TestValueIDsRenumbered(t *testing.T) {
	g := ir.NewGraph("g")
	x := g.AddInput("x", ir.Float32, ir.S(2))
	for i := 0; i < 100; i++ {
		g.NewValue("dropped", ir.Float32, nil)
	}
	a := g.AddNode("Relu", "", []*ir.Value{x}, 1, nil)
	g.NewValue("dropped", ir.Float32, nil)
	b := g.AddNode("Neg", "", []*ir.Value{a.Outputs[0]}, 1, nil)
	g.Outputs = []*ir.Value{a.Outputs[0], b.Outputs[0]}
	require.Equal(t, []int{0, 101, 103}, []int{x.ID, a.Outputs[0].ID, b.Outputs[0].ID})
	p := &plan.Plan{Graph: g, Partitions: []*plan.Partition{{Device: "cpu", Nodes: g.Nodes}}}
	f, err := plan.Decode(encode(t, p), "ids")
	require.NoError(t, err)
	q := f.Plan.Graph
	require.Equal(t, []int{0, 1, 2}, []int{q.Inputs[0].ID, q.Nodes[0].Outputs[0].ID, q.Nodes[1].Outputs[0].ID})
	require.Equal(t, 3, q.NewValue("new", ir.Float32, nil).ID, "the id counter continues after the loaded values")
}

func TestWriteIsDeterministic(t *testing.T) {
	a := encode(t, samplePlan(t))
	for i := 0; i < 3; i++ { // fresh graphs: different pointers, map layouts
		require.Equal(t, a, encode(t, samplePlan(t)))
	}
}

func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.wplan")
	require.NoError(t, plan.WriteFile(path, samplePlan(t), sampleMeta))
	f, err := plan.Open(path)
	require.NoError(t, err)
	require.Equal(t, "-O2", f.Meta["options"])
	require.NoError(t, f.VerifyWeights())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), f.Size)
	for _, c := range f.Plan.Graph.Consts {
		if len(c.Const.Data) > 0 {
			require.Zero(t, uintptr(unsafe.Pointer(unsafe.SliceData(c.Const.Data)))%64, "const %v misaligned in memory", c)
		}
	}
	require.NoError(t, f.Close())
	require.NoError(t, f.Close())
	entries, _ := os.ReadDir(filepath.Dir(path))
	require.Len(t, entries, 1, "WriteFile left a temporary file")

	_, err = plan.Open(filepath.Join(t.TempDir(), "missing.wplan"))
	require.ErrorContains(t, err, "missing.wplan")
}

func TestWriteRejects(t *testing.T) {
	p := samplePlan(t)
	p.Partitions[0].Inputs = append(p.Partitions[0].Inputs, ir.NewGraph("other").AddInput("stray", ir.Float32, ir.S(1)))
	require.ErrorContains(t, plan.Write(&bytes.Buffer{}, p, nil), "no graph of the plan defines")

	p = samplePlan(t)
	p.Partitions[1].Nodes = append(p.Partitions[1].Nodes, &ir.Node{Op: "Relu"})
	require.ErrorContains(t, plan.Write(&bytes.Buffer{}, p, nil), "not a node of the top-level graph")

	p = samplePlan(t)
	p.Partitions[1].Nodes = p.Partitions[1].Nodes[1:]
	p.Partitions[1].Causes, p.Buffers, p.Arenas = nil, nil, nil
	require.ErrorContains(t, plan.Write(&bytes.Buffer{}, p, nil), `node 2 "branch" (If) is in no partition`)

	p = samplePlan(t)
	p.Partitions[0].Causes = p.Partitions[0].Causes[:1]
	require.ErrorContains(t, plan.Write(&bytes.Buffer{}, p, nil), "partition 0 has 1 causes for 2 nodes")

	p = samplePlan(t)
	p.Graph.Outputs = append(p.Graph.Outputs, ir.NewGraph("x").AddInput("y", ir.Float32, ir.S(1)))
	require.ErrorContains(t, plan.Write(&bytes.Buffer{}, p, nil), "ir:")
	require.Error(t, plan.Write(&bytes.Buffer{}, &plan.Plan{}, nil))
}

func TestDecodeErrors(t *testing.T) {
	good := encode(t, samplePlan(t))
	le := binary.LittleEndian
	mod := func(f func(b []byte), restamp bool) []byte {
		b := bytes.Clone(good)
		f(b)
		if restamp {
			plan.Restamp(b)
		}
		return b
	}
	graphOff, _ := plan.SectionRange(good, plan.SectionGraph)
	schedOff, schedLen := plan.SectionRange(good, plan.SectionSchedule)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, `not a weft plan file (starts with ""`},
		{"foreign file", []byte("\x08\x07\x12\x04onnx model bytes go here..."), "not a weft plan file"},
		{"short header", good[:20], "truncated: 20 bytes, the header alone takes 32"},
		{"truncated", good[:len(good)-1], "truncated"},
		{"trailing data", append(bytes.Clone(good), 0), "trailing data"},
		{"version", mod(func(b []byte) { le.PutUint16(b[6:], 3) }, false), "plan format version 3; this weft reads versions 1 to 2"},
		{"big endian", mod(func(b []byte) { le.PutUint32(b[8:], 0x0D0C0B0A) }, false), "big-endian plan"},
		{"header checksum", mod(func(b []byte) { b[44]++ }, false), "header checksum mismatch"},
		{"section checksum", mod(func(b []byte) { b[graphOff+5] ^= 0x40 }, false), "graph section: checksum mismatch"},
		{"section outside file", mod(func(b []byte) { le.PutUint64(b[32+2*32+16:], 1<<40) }, true), "schedule section: bytes"},
		{"unaligned section", mod(func(b []byte) { le.PutUint64(b[32+2*32+8:], uint64(schedOff+1)) }, true), "not 64-byte aligned"},
		{"unknown section", mod(func(b []byte) { le.PutUint32(b[32+3*32:], 9) }, true), "unknown section kind 9"},
		{"duplicate section", mod(func(b []byte) { le.PutUint32(b[32+3*32:], plan.SectionSchedule) }, true), "schedule section: appears twice"},
		{"absurd section count", mod(func(b []byte) { le.PutUint32(b[12:], 1<<30) }, false), "section count 1073741824 out of range"},
		{"absurd graph count", mod(func(b []byte) { copy(b[graphOff:], []byte{0xff, 0xff, 0xff, 0xff, 0x0f}) }, true),
			"graph section: corrupt at byte 5: graph count 4294967295 exceeds"},
		{"overlapping buffers", mod(func(b []byte) {
			// custom's first output: device "cpu", 32 bytes, arena 0, offset 64
			// (zig-zag varints 0x40, 0x00, 0x80 0x01) -> offset 0 (0x80 0x00,
			// an overlong zero), where matmul's output is still alive.
			moff, mlen := plan.SectionRange(good, plan.SectionMemory)
			i := bytes.Index(b[moff:moff+mlen], []byte("cpu\x40\x00\x80\x01"))
			require.Positive(t, i)
			b[moff+i+6] = 0
		}, true), "memory section: plan: %6() f32[batch,2] [0, 32) and %7() invalid[?] [0, 32) are alive at once"},
		{"schedule garbage", mod(func(b []byte) {
			for i := 0; i < schedLen; i++ {
				b[schedOff+i] = 0xff
			}
		}, true), "schedule section: corrupt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plan.Decode(tc.data, "bad.wplan")
			require.Error(t, err)
			require.Contains(t, err.Error(), "plan: bad.wplan: ")
			require.Contains(t, err.Error(), tc.want)
			var fe *plan.FormatError
			require.True(t, errors.As(err, &fe))
		})
	}
}

// TestEveryPrefixAndByteFails checks that every truncation and every
// single-byte corruption of the small sections is refused with an error
// (never a panic and never a silently different plan).
func TestEveryPrefixAndByteFails(t *testing.T) {
	good := encode(t, samplePlan(t))
	for n := 0; n < len(good); n++ {
		_, err := plan.Decode(good[:n], "p")
		require.Error(t, err, "prefix of %d bytes", n)
	}
	woff, _ := plan.SectionRange(good, plan.SectionWeights)
	for i := 0; i < woff; i++ {
		b := bytes.Clone(good)
		b[i] ^= 0x5a
		if _, err := plan.Decode(b, "p"); err == nil {
			// Only padding between sections is not covered by a checksum.
			require.Zero(t, good[i], "corrupting byte %d went unnoticed", i)
		}
	}
	// Corrupted weights open (their pages are not read) but fail VerifyWeights.
	b := bytes.Clone(good)
	b[woff] ^= 1
	f, err := plan.Decode(b, "p")
	require.NoError(t, err)
	require.ErrorContains(t, f.VerifyWeights(), "p: weights section: checksum mismatch")
}

func TestFormatErrorText(t *testing.T) {
	_, err := plan.Decode([]byte("WPLAN\x00\x01"), "x.wplan")
	require.EqualError(t, err, "plan: x.wplan: truncated: 7 bytes, the header alone takes 32")
	require.True(t, strings.HasPrefix(plan.Magic, "WPLAN"))
}
