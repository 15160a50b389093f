package ir

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./ir -update to create the golden file")
	require.Equal(t, string(want), got)
}

func mlp(t *testing.T) *Graph {
	b := NewBuilder("mlp")
	x := b.Input("x", Float32, Shape{Sym("batch"), {Size: 4}})
	w := b.Const("w", FromFloat32([]int64{4, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8}))
	h := b.Op("MatMul", x, w)
	h.DType, h.Shape = Float32, Shape{Sym("batch"), {Size: 2}}
	y := b.OpA("Softmax", []AttrOption{Int("axis", -1)}, b.Op("Relu", h))
	parts := b.OpN("Split", 2, []AttrOption{Int("axis", 1)}, y)
	b.Output("y", y)
	b.Output("", parts[1])
	g, err := b.Build()
	require.NoError(t, err)
	return g
}

func TestTextGolden(t *testing.T) {
	golden(t, "mlp", Text(mlp(t)))
}

func TestTextSubgraph(t *testing.T) {
	g := NewGraph("main")
	c := g.AddInput("cond", Bool, Scalar())
	x := g.AddInput("x", Float32, S(3))
	then := g.NewSubgraph("then")
	tn := then.AddNode("Neg", "", []*Value{x}, 1, nil) // reads x from the outer graph
	then.Outputs = []*Value{tn.Outputs[0]}
	els := g.NewSubgraph("else")
	en := els.AddNode("Identity", "", []*Value{x}, 1, nil)
	els.Outputs = []*Value{en.Outputs[0]}
	n := g.AddNode("If", "branch", []*Value{c}, 1, Attrs{})
	GraphAttr("then_branch", then)(n.Attrs)
	GraphAttr("else_branch", els)(n.Attrs)
	g.Outputs = []*Value{n.Outputs[0]}
	require.NoError(t, Verify(g))
	require.Equal(t, []*Value{x}, then.OuterRefs())
	golden(t, "if", Text(g))
}

func TestVerifyErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func() *Graph
		want  string
	}{
		{"use before def", func() *Graph {
			g := NewGraph("g")
			x := g.AddInput("x", Float32, S(2))
			a := g.AddNode("Relu", "a", []*Value{x}, 1, nil)
			b := g.AddNode("Neg", "b", []*Value{x}, 1, nil)
			a.Inputs[0] = b.Outputs[0] // a now reads b, which comes later
			g.Outputs = []*Value{a.Outputs[0]}
			return g
		}, "used before it is defined"},
		{"undefined output", func() *Graph {
			g := NewGraph("g")
			g.Outputs = []*Value{g.NewValue("ghost", Float32, S(1))}
			return g
		}, "is not defined"},
		{"double definition", func() *Graph {
			g := NewGraph("g")
			x := g.AddInput("x", Float32, S(2))
			g.Inputs = append(g.Inputs, x)
			return g
		}, "defined twice"},
		{"const mismatch", func() *Graph {
			g := NewGraph("g")
			c := g.AddConst("c", FromFloat32([]int64{2}, []float32{1, 2}))
			c.Shape = S(3)
			return g
		}, "declared as f32[3]"},
		{"bad const bytes", func() *Graph {
			g := NewGraph("g")
			g.AddConst("c", &Tensor{DType: Float32, Shape: []int64{2}, Data: make([]byte, 7)})
			return g
		}, "7 bytes of data, want 8"},
		{"no op", func() *Graph {
			g := NewGraph("g")
			g.AddNode("", "empty", nil, 1, nil)
			return g
		}, "has no op"},
		{"foreign value", func() *Graph {
			g := NewGraph("g")
			other := NewGraph("other")
			v := other.AddInput("v", Float32, S(1))
			g.AddNode("Relu", "r", []*Value{v}, 1, nil)
			return g
		}, "used before it is defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.build())
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestVerifyTypedWantsTypes(t *testing.T) {
	b := NewBuilder("g")
	x := b.Input("x", Float32, S(2))
	b.Output("y", b.Op("Relu", x))
	g, err := b.Build()
	require.NoError(t, err)
	err = VerifyTyped(g)
	require.ErrorContains(t, err, "no inferred dtype/shape")
	g.Nodes[0].Outputs[0].DType = Float32
	g.Nodes[0].Outputs[0].Shape = S(2)
	require.NoError(t, VerifyTyped(g))
}

func TestHalfConversions(t *testing.T) {
	tests := []struct {
		f    float32
		bits uint16
	}{
		{0, 0x0000}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {0.5, 0x3800},
		{float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{6.097555160522461e-05, 0x03ff}, // largest subnormal
		{6.103515625e-05, 0x0400},       // smallest normal
		{1.0009765625, 0x3c01},
	}
	for _, tc := range tests {
		require.Equal(t, tc.bits, F32ToF16(tc.f), "F32ToF16(%g)", tc.f)
		require.Equal(t, tc.f, F16ToF32(tc.bits), "F16ToF32(%#x)", tc.bits)
	}
	// rounding: halfway between 1 and 1+2^-10 rounds to even (1), just above rounds up
	require.Equal(t, uint16(0x3c00), F32ToF16(1+1.0/2048))
	require.Equal(t, uint16(0x3c01), F32ToF16(1+1.0/2048+1.0/65536))
	require.Equal(t, uint16(0x7c00), F32ToF16(70000)) // overflow → inf
	require.True(t, math.IsNaN(float64(F16ToF32(F32ToF16(float32(math.NaN()))))))
	// exhaustive round trip of every finite half
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 {
			continue
		}
		require.Equal(t, uint16(h), F32ToF16(F16ToF32(uint16(h))), "%#x", h)
	}
	require.Equal(t, uint16(0x3f80), F32ToBF16(1))
	require.Equal(t, float32(-2), BF16ToF32(0xc000))
	require.Equal(t, uint16(0x3f80), F32ToBF16(1+1.0/256)) // tie → even
	require.Equal(t, uint16(0x3f81), F32ToBF16(1+3.0/512)) // above the tie
}

func TestTensorAccessors(t *testing.T) {
	for _, dt := range []DType{Float32, Float64, Float16, BFloat16, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Bool} {
		tt := NewTensor(dt, []int64{2, 3})
		require.NoError(t, tt.Check())
		require.Equal(t, 6, tt.Len())
		for i := 0; i < 6; i++ {
			tt.SetFloat64(i, float64(i))
		}
		for i := 0; i < 6; i++ {
			want := float64(i)
			if dt == Bool && i > 0 {
				want = 1
			}
			require.Equal(t, want, tt.Float64(i), "%v[%d]", dt, i)
			require.Equal(t, int64(want), tt.Int64(i), "%v[%d]", dt, i)
		}
	}
	i8 := NewTensor(Int8, []int64{1})
	i8.SetInt64(0, 200) // wraps
	require.Equal(t, int64(-56), i8.Int64(0))
	u64 := NewTensor(Uint64, []int64{1})
	u64.SetInt64(0, -1)
	require.Equal(t, uint64(math.MaxUint64), u64.Uint64(0))
	f := FromFloat32([]int64{3}, []float32{1.5, -2, 3})
	require.Equal(t, []float32{1.5, -2, 3}, f.Float32s())
	require.Equal(t, uintptr(0), uintptr(len(f.Data))%4)
	require.Equal(t, []int64{1, 5}, FromInt64([]int64{2}, []int64{1, 5}).Int64s())
	scalar := NewTensor(Float32, nil)
	require.Equal(t, 1, scalar.Len())
	require.ErrorContains(t, (&Tensor{DType: Int32, Shape: []int64{-1}}).Check(), "negative dim")
}

func TestShapeAndDType(t *testing.T) {
	s := Shape{Sym("batch"), {Size: 3}}
	require.Equal(t, "batch,3", s.String())
	require.False(t, s.Static())
	require.Equal(t, int64(-1), s.NumElements())
	require.True(t, s.Compatible(S(7, 3)))
	require.False(t, s.Compatible(S(7, 4)))
	require.Equal(t, "?", Shape(nil).String())
	require.True(t, Scalar().Static())
	require.Equal(t, int64(1), Scalar().NumElements())
	for d := DType(1); d < numDTypes; d++ {
		p, err := ParseDType(d.String())
		require.NoError(t, err)
		require.Equal(t, d, p)
	}
	_, err := ParseDType("f128")
	require.Error(t, err)
	require.True(t, strings.HasPrefix(DType(99).String(), "dtype("))
}

func TestSetFloat64RoundsOnce(t *testing.T) {
	// 1 + 2^-11 + 2^-40 is just above the f16 tie between 1 and 1+2^-10; a
	// float32 step would drop the 2^-40 and round the tie to even (1).
	h := NewTensor(Float16, []int64{1})
	h.SetFloat64(0, 1+1.0/2048+math.Pow(2, -40))
	require.Equal(t, float64(1+1.0/1024), h.Float64(0))
	b := NewTensor(BFloat16, []int64{1})
	b.SetFloat64(0, 1+1.0/256+math.Pow(2, -40))
	require.Equal(t, float64(1+1.0/128), b.Float64(0))
}
