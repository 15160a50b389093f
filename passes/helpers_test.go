package passes

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/weftrt/weft/ir"
)

// sh builds a shape from ints (known dims), strings (symbols; "?" for an
// anonymous unknown dim).
func sh(dims ...any) ir.Shape {
	s := ir.Shape{}
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			s = append(s, ir.Dim{Size: int64(d)})
		case string:
			if d == "?" {
				s = append(s, ir.Dim{Size: -1})
			} else {
				s = append(s, ir.Sym(d))
			}
		default:
			panic(fmt.Sprintf("sh: %T", d))
		}
	}
	return s
}

// typeOf renders a value's type as the text form does: f32[1,batch,?].
func typeOf(v *ir.Value) string { return fmt.Sprintf("%v[%v]", v.DType, v.Shape) }

// i64 adds a 1-D int64 constant.
func i64(b *ir.Builder, vals ...int64) *ir.Value {
	return b.Const("", ir.FromInt64([]int64{int64(len(vals))}, vals))
}

// i64s adds a scalar int64 constant.
func i64s(b *ir.Builder, v int64) *ir.Value {
	return b.Const("", ir.FromInt64(nil, []int64{v}))
}

// f32 adds a 1-D float32 constant.
func f32(b *ir.Builder, vals ...float32) *ir.Value {
	return b.Const("", ir.FromFloat32([]int64{int64(len(vals))}, vals))
}

// f32s adds a scalar float32 constant.
func f32s(b *ir.Builder, v float32) *ir.Value {
	return b.Const("", ir.FromFloat32(nil, []float32{v}))
}

// zeros adds a float32 constant of the given shape.
func zeros(b *ir.Builder, dims ...int64) *ir.Value {
	return b.Const("", ir.NewTensor(ir.Float32, dims))
}

// at builds an attribute list.
func at(opts ...ir.AttrOption) []ir.AttrOption { return opts }

// inferCase builds a graph, runs InferShapes and compares the types of the
// returned values with want.
type inferCase struct {
	name  string
	build func(b *ir.Builder) []*ir.Value
	want  []string
}

func runInferCases(t *testing.T, cases []inferCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := ir.NewBuilder("t")
			vs := c.build(b)
			for i, v := range vs {
				b.Output(fmt.Sprintf("out%d", i), v)
			}
			g, err := b.Build()
			require.NoError(t, err)
			require.NoError(t, InferShapes(g))
			got := make([]string, len(vs))
			for i, v := range vs {
				got[i] = typeOf(v)
			}
			require.Equal(t, c.want, got)
		})
	}
}

// inferErr builds a graph and expects InferShapes to fail with a message
// containing each of the fragments.
func inferErr(t *testing.T, build func(b *ir.Builder), fragments ...string) {
	t.Helper()
	b := ir.NewBuilder("t")
	build(b)
	err := InferShapes(b.G)
	require.Error(t, err)
	for _, f := range fragments {
		require.Contains(t, err.Error(), f)
	}
}

// named gives the producer of v a node name (for error messages).
func named(v *ir.Value, name string) *ir.Value {
	v.Producer.Name = name
	return v
}
