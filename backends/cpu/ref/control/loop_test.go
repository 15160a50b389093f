package control

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// loopGraph builds a Loop over one carried i64 scalar y:
//
//	body(i, c, y): y' = y + i + off;  c' = i < limit;  scan = alias(y')
//
// off and limit are outer-scope inputs of the main graph. When declared is
// set, the scan output carries its static type (i64 scalar) as shape
// inference would record it.
func loopGraph(declared bool) (*ir.Graph, *ir.Node) {
	g := ir.NewGraph("main")
	m := g.AddInput("M", ir.Int64, ir.Scalar())
	cond := g.AddInput("cond", ir.Bool, ir.Scalar())
	y0 := g.AddInput("y", ir.Int64, ir.Scalar())
	off := g.AddInput("off", ir.Int64, ir.Scalar())
	limit := g.AddInput("limit", ir.Int64, ir.Scalar())

	body := g.NewSubgraph("body")
	i := body.AddInput("i", ir.Int64, ir.Scalar())
	body.AddInput("c", ir.Bool, ir.Scalar())
	y := body.AddInput("y", ir.Int64, ir.Scalar())
	yi := body.AddNode("test.Add", "", []*ir.Value{y, i}, 1, nil).Outputs[0]
	y2 := body.AddNode("test.Add", "", []*ir.Value{yi, off}, 1, nil).Outputs[0]
	c2 := body.AddNode("test.Less", "", []*ir.Value{i, limit}, 1, nil).Outputs[0]
	sc := body.AddNode("test.Alias", "", []*ir.Value{y2}, 1, nil).Outputs[0]
	if declared {
		sc.DType, sc.Shape = ir.Int64, ir.Scalar()
	}
	body.Outputs = []*ir.Value{c2, y2, sc}

	n := g.AddNode("Loop", "loop", []*ir.Value{m, cond, y0}, 2, ir.Attrs{
		"body": {Kind: ir.AttrGraph, Graph: body},
	})
	return g, n
}

func TestLoop(t *testing.T) {
	s := func(v int64) *ir.Tensor { return i64(nil, v) }
	tests := []struct {
		name     string
		m, cond  *ir.Tensor // nil: absent
		y0       int64
		off, lim int64
		wantY    float64
		wantScan []float64
	}{
		{"for loop", s(3), boolT(true), 0, 0, 100, 3, []float64{0, 1, 3}},
		{"while loop", nil, boolT(true), 0, 0, 3, 6, []float64{0, 1, 3, 6}},
		{"trip count and cond, cond ends", s(10), boolT(true), 0, 0, 1, 1, []float64{0, 1}},
		{"trip count and cond, count ends", s(2), boolT(true), 0, 0, 100, 1, []float64{0, 1}},
		{"for loop ignores body cond", s(2), nil, 0, 0, -5, 1, []float64{0, 1}},
		{"initial value", s(2), boolT(true), 5, 0, 100, 6, []float64{5, 6}},
		{"outer-scope value", s(2), nil, 0, 10, 0, 21, []float64{10, 21}},
		{"zero trip count", s(0), boolT(true), 7, 0, 100, 7, []float64{}},
		{"false cond", s(5), boolT(false), 7, 0, 100, 7, []float64{}},
		{"negative trip count", s(-1), nil, 7, 0, 100, 7, []float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, n := loopGraph(true)
			if tc.m == nil {
				n.Inputs[0] = nil
			}
			if tc.cond == nil {
				n.Inputs[1] = nil
			}
			y0 := s(tc.y0)
			out, err := run(t, g, n, tc.m, tc.cond, y0, s(tc.off), s(tc.lim))
			require.NoError(t, err)
			require.Equal(t, ir.Int64, out[0].DType)
			require.Equal(t, []int64{}, out[0].Shape)
			require.Equal(t, tc.wantY, out[0].Float64(0))
			require.Equal(t, ir.Int64, out[1].DType)
			require.Equal(t, []int64{int64(len(tc.wantScan))}, out[1].Shape)
			require.Equal(t, tc.wantScan, floats(out[1]))
			require.NotSame(t, y0, out[0])
		})
	}
}

func TestLoopZeroIterationsUndeclared(t *testing.T) {
	g, n := loopGraph(false)
	_, err := run(t, g, n, i64(nil, 0), boolT(true), i64(nil, 1), i64(nil, 0), i64(nil, 0))
	require.True(t, errors.Is(err, ir.ErrUnsupported), "%v", err)
	// One iteration is enough to learn the scan output's type.
	out, err := run(t, g, n, i64(nil, 1), boolT(true), i64(nil, 1), i64(nil, 0), i64(nil, 0))
	require.NoError(t, err)
	require.Equal(t, []float64{1}, floats(out[1]))
}

func TestLoopErrors(t *testing.T) {
	s := func(v int64) *ir.Tensor { return i64(nil, v) }
	t.Run("float cond", func(t *testing.T) {
		g, n := loopGraph(true)
		_, err := run(t, g, n, s(1), f32(nil, 1), s(0), s(0), s(0))
		require.ErrorContains(t, err, "cond")
	})
	t.Run("i32 trip count", func(t *testing.T) {
		g, n := loopGraph(true)
		m := ir.NewTensor(ir.Int32, nil)
		_, err := run(t, g, n, m, boolT(true), s(0), s(0), s(0))
		require.ErrorContains(t, err, "M")
	})
	t.Run("never ends", func(t *testing.T) {
		g, n := loopGraph(true)
		n.Inputs[0], n.Inputs[1] = nil, nil
		_, err := run(t, g, n, nil, nil, s(0), s(0), s(0))
		require.ErrorContains(t, err, "never end")
	})
	t.Run("body arity", func(t *testing.T) {
		g, n := loopGraph(true)
		body := n.AttrGraph("body")
		body.Outputs = body.Outputs[:2] // drops the scan output
		_, err := run(t, g, n, s(1), boolT(true), s(0), s(0), s(0))
		require.ErrorContains(t, err, "outputs")
	})
	t.Run("body inputs", func(t *testing.T) {
		g, n := loopGraph(true)
		body := n.AttrGraph("body")
		body.AddInput("extra", ir.Int64, ir.Scalar())
		_, err := run(t, g, n, s(1), boolT(true), s(0), s(0), s(0))
		require.ErrorContains(t, err, "inputs")
	})
	t.Run("body cond not bool", func(t *testing.T) {
		g, n := loopGraph(true)
		body := n.AttrGraph("body")
		body.Outputs[0] = body.Outputs[1] // an i64 as cond_out
		_, err := run(t, g, n, s(3), boolT(true), s(0), s(0), s(0))
		require.ErrorContains(t, err, "cond")
	})
}

// TestLoopScanShapeChange checks that a carried value may change shape
// between iterations (y + k broadcasts [1] to [2]) but a scan output may
// not (here the scan output is the carried y before the update).
func TestLoopScanShapeChange(t *testing.T) {
	g := ir.NewGraph("main")
	m := g.AddInput("M", ir.Int64, ir.Scalar())
	y0 := g.AddInput("y", ir.Float32, ir.S(1))
	k := g.AddInput("k", ir.Float32, ir.S(2))
	body := g.NewSubgraph("body")
	body.AddInput("i", ir.Int64, ir.Scalar())
	c := body.AddInput("c", ir.Bool, ir.Scalar())
	y := body.AddInput("y", ir.Float32, nil)
	y2 := body.AddNode("test.Add", "", []*ir.Value{y, k}, 1, nil).Outputs[0]
	body.Outputs = []*ir.Value{c, y2, y}
	n := g.AddNode("Loop", "", []*ir.Value{m, nil, y0}, 2, ir.Attrs{"body": {Kind: ir.AttrGraph, Graph: body}})

	// One iteration: y grows from [1] to [2]; the scan output is y before.
	out, err := run(t, g, n, i64(nil, 1), f32([]int64{1}, 1), f32([]int64{2}, 10, 20))
	require.NoError(t, err)
	require.Equal(t, []float64{11, 21}, floats(out[0]))
	require.Equal(t, []int64{1, 1}, out[1].Shape)
	// Two iterations: the scan output is [1] then [2]: an error.
	_, err = run(t, g, n, i64(nil, 2), f32([]int64{1}, 1), f32([]int64{2}, 10, 20))
	require.ErrorContains(t, err, "iteration 1")
}
