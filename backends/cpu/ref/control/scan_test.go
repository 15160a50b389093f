package control

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// scanGraph builds a running sum: body(sum, x...) = (sum + x[0], alias(sum + x[0])),
// with one state input and nScan scan inputs (only the first is summed).
func scanGraph(nScan int, opset int64, attrs ir.Attrs) (*ir.Graph, *ir.Node) {
	g := ir.NewGraph("main")
	if opset > 0 {
		g.Opsets = map[string]int64{"": opset}
	}
	var ins []*ir.Value
	if opset == 8 {
		ins = append(ins, nil) // sequence_lens
	}
	ins = append(ins, g.AddInput("init", ir.Float32, nil))
	for j := 0; j < nScan; j++ {
		ins = append(ins, g.AddInput("x", ir.Float32, nil))
	}
	body := g.NewSubgraph("body")
	sum := body.AddInput("sum", ir.Float32, ir.S(2))
	next := body.AddInput("next", ir.Float32, ir.S(2))
	for j := 1; j < nScan; j++ {
		body.AddInput("unused", ir.Float32, nil)
	}
	s2 := body.AddNode("test.Add", "", []*ir.Value{sum, next}, 1, nil).Outputs[0]
	sc := body.AddNode("test.Alias", "", []*ir.Value{s2}, 1, nil).Outputs[0]
	sc.DType, sc.Shape = ir.Float32, ir.S(2)
	body.Outputs = []*ir.Value{s2, sc}
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	attrs["body"] = &ir.Attr{Kind: ir.AttrGraph, Graph: body}
	if opset == 8 {
		attrs["batched"] = &ir.Attr{Kind: ir.AttrInt, Int: 1} // as the importer marks Scan-8
	}
	if _, ok := attrs["num_scan_inputs"]; !ok {
		attrs["num_scan_inputs"] = &ir.Attr{Kind: ir.AttrInt, Int: int64(nScan)}
	}
	n := g.AddNode("Scan", "scan", ins, 2, attrs)
	return g, n
}

func ints(v ...int64) *ir.Attr { return &ir.Attr{Kind: ir.AttrInts, Ints: v} }

func TestScan(t *testing.T) {
	rows := f32([]int64{3, 2}, 1, 2, 3, 4, 5, 6)
	cols := f32([]int64{2, 3}, 1, 3, 5, 2, 4, 6) // rows transposed
	tests := []struct {
		name   string
		attrs  ir.Attrs
		x      *ir.Tensor
		wantY  []float64
		zShape []int64
		wantZ  []float64
	}{
		{"forward", nil, rows, []float64{10, 14}, []int64{3, 2}, []float64{2, 4, 5, 8, 10, 14}},
		{"reverse input", ir.Attrs{"scan_input_directions": ints(1)}, rows,
			[]float64{10, 14}, []int64{3, 2}, []float64{6, 8, 9, 12, 10, 14}},
		{"reverse output", ir.Attrs{"scan_output_directions": ints(1)}, rows,
			[]float64{10, 14}, []int64{3, 2}, []float64{10, 14, 5, 8, 2, 4}},
		{"input axis 1", ir.Attrs{"scan_input_axes": ints(1)}, cols,
			[]float64{10, 14}, []int64{3, 2}, []float64{2, 4, 5, 8, 10, 14}},
		{"input axis -1", ir.Attrs{"scan_input_axes": ints(-1)}, cols,
			[]float64{10, 14}, []int64{3, 2}, []float64{2, 4, 5, 8, 10, 14}},
		{"output axis 1", ir.Attrs{"scan_output_axes": ints(1)}, rows,
			[]float64{10, 14}, []int64{2, 3}, []float64{2, 5, 10, 4, 8, 14}},
		{"output axis -1 reversed", ir.Attrs{"scan_output_axes": ints(-1), "scan_output_directions": ints(1)}, rows,
			[]float64{10, 14}, []int64{2, 3}, []float64{10, 5, 2, 14, 8, 4}},
		{"empty sequence", nil, ir.NewTensor(ir.Float32, []int64{0, 2}),
			[]float64{1, 2}, []int64{0, 2}, []float64{}},
		{"empty sequence, output axis 1", ir.Attrs{"scan_output_axes": ints(1)}, ir.NewTensor(ir.Float32, []int64{0, 2}),
			[]float64{1, 2}, []int64{2, 0}, []float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, n := scanGraph(1, 0, tc.attrs)
			init := f32([]int64{2}, 1, 2)
			out, err := run(t, g, n, init, tc.x)
			require.NoError(t, err)
			require.Equal(t, []int64{2}, out[0].Shape)
			require.Equal(t, tc.wantY, floats(out[0]))
			require.Equal(t, tc.zShape, out[1].Shape)
			require.Equal(t, tc.wantZ, floats(out[1]))
			require.NotSame(t, init, out[0])
		})
	}
}

func TestScanOpset8(t *testing.T) {
	g, n := scanGraph(1, 8, nil)
	init := f32([]int64{2, 2}, 1, 2, 0, 0)
	x := f32([]int64{2, 3, 2}, 1, 2, 3, 4, 5, 6, 1, 1, 1, 1, 1, 1)
	out, err := run(t, g, n, init, x)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 2}, out[0].Shape)
	require.Equal(t, []float64{10, 14, 3, 3}, floats(out[0]))
	require.Equal(t, []int64{2, 3, 2}, out[1].Shape)
	require.Equal(t, []float64{2, 4, 5, 8, 10, 14, 1, 1, 2, 2, 3, 3}, floats(out[1]))

	// directions=[1] reverses each batch entry's sequence.
	g, n = scanGraph(1, 8, ir.Attrs{"directions": ints(1)})
	out, err = run(t, g, n, init, x)
	require.NoError(t, err)
	require.Equal(t, []float64{6, 8, 9, 12, 10, 14, 1, 1, 2, 2, 3, 3}, floats(out[1]))
}

func TestScanErrors(t *testing.T) {
	init := f32([]int64{2}, 0, 0)
	rows := f32([]int64{3, 2}, 1, 2, 3, 4, 5, 6)
	t.Run("sequence lengths differ", func(t *testing.T) {
		g, n := scanGraph(2, 0, nil)
		_, err := run(t, g, n, init, rows, f32([]int64{2, 2}, 1, 2, 3, 4))
		require.ErrorContains(t, err, "sequence length")
	})
	t.Run("bad direction", func(t *testing.T) {
		g, n := scanGraph(1, 0, ir.Attrs{"scan_input_directions": ints(2)})
		_, err := run(t, g, n, init, rows)
		require.ErrorContains(t, err, "scan_input_directions")
	})
	t.Run("axes length", func(t *testing.T) {
		g, n := scanGraph(1, 0, ir.Attrs{"scan_input_axes": ints(0, 0)})
		_, err := run(t, g, n, init, rows)
		require.ErrorContains(t, err, "scan_input_axes")
	})
	t.Run("axis out of range", func(t *testing.T) {
		g, n := scanGraph(1, 0, ir.Attrs{"scan_input_axes": ints(2)})
		_, err := run(t, g, n, init, rows)
		require.ErrorContains(t, err, "axis")
	})
	t.Run("body arity", func(t *testing.T) {
		g, n := scanGraph(1, 0, nil)
		body := n.AttrGraph("body")
		body.Outputs = append(body.Outputs, body.Outputs[0])
		_, err := run(t, g, n, init, rows)
		require.ErrorContains(t, err, "outputs")
	})
	t.Run("num_scan_inputs missing", func(t *testing.T) {
		g, n := scanGraph(1, 0, ir.Attrs{"num_scan_inputs": &ir.Attr{Kind: ir.AttrInt, Int: 0}})
		_, err := run(t, g, n, init, rows)
		require.ErrorContains(t, err, "num_scan_inputs")
	})
	t.Run("state shape mismatch in body", func(t *testing.T) {
		g, n := scanGraph(1, 0, nil)
		_, err := run(t, g, n, f32([]int64{3}, 0, 0, 0), rows)
		require.Error(t, err)
	})
}
