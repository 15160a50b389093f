package vision

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// runOp runs one node on the given inputs (nil: absent) and returns its outputs.
func runOp(t *testing.T, op string, attrs ir.Attrs, nOut int, ins ...*ir.Tensor) ([]*ir.Tensor, error) {
	t.Helper()
	g := ir.NewGraph("g")
	env := backends.NewEnv(nil)
	vals := make([]*ir.Value, len(ins))
	for i, x := range ins {
		if x != nil {
			vals[i] = g.AddInput("", x.DType, ir.ShapeOf(x.Shape))
			env.Set(vals[i], x)
		}
	}
	if attrs == nil {
		attrs = ir.Attrs{}
	}
	n := g.AddNode(op, "", vals, nOut, attrs)
	if err := ref.RunNode(&ref.Context{Env: env}, n); err != nil {
		return nil, err
	}
	out := make([]*ir.Tensor, nOut)
	for i, v := range n.Outputs {
		out[i] = env.Get(v)
	}
	return out, nil
}

func f32(shape []int64, v ...float64) *ir.Tensor { return ir.FromFloat64(ir.Float32, shape, v) }
func i64s(v ...int64) *ir.Tensor                 { return ir.FromInt64([]int64{int64(len(v))}, v) }
func str(s string) *ir.Attr                      { return &ir.Attr{Kind: ir.AttrString, Str: s} }
func intAttr(v int64) *ir.Attr                   { return &ir.Attr{Kind: ir.AttrInt, Int: v} }
func flt(f float32) *ir.Attr                     { return &ir.Attr{Kind: ir.AttrFloat, Float: f} }
func ints(v ...int64) *ir.Attr                   { return &ir.Attr{Kind: ir.AttrInts, Ints: v} }

// seq returns 1, 2, ..., n.
func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i + 1)
	}
	return v
}

// near checks got's shape and values against want.
func near(t *testing.T, want []float64, wantShape []int64, got *ir.Tensor) {
	t.Helper()
	require.Equal(t, wantShape, got.Shape)
	require.Equal(t, len(want), got.Len())
	for i, w := range want {
		require.InDelta(t, w, got.Float64(i), 1e-5*(1+math.Abs(w)), "element %d", i)
	}
}
