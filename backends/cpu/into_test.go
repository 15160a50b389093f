package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// intoCase is one node run by its into kernel and by its reference kernel.
type intoCase struct {
	name   string
	op     string
	attrs  []ir.AttrOption
	in     []*ir.Tensor // nil: absent optional input
	consts []bool       // inputs the builder sees as constants
	tol    float64      // relative tolerance (0: 1e-6)
	nout   int          // outputs (0: 1)
	pool   int          // the pool's workers (0: the default pool)
}

func randF32(r *rand.Rand, shape ...int64) *ir.Tensor {
	t := ir.NewTensor(ir.Float32, shape)
	v := t.Float32s()
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return t
}

func i64(shape []int64, vals ...int64) *ir.Tensor { return ir.FromInt64(shape, vals) }

// node builds a one-node graph over inputs shaped like in.
func node(op string, attrs []ir.AttrOption, in []*ir.Tensor) *ir.Node { return nodeN(op, attrs, in, 1) }

// nodeN is node with nOut outputs.
func nodeN(op string, attrs []ir.AttrOption, in []*ir.Tensor, nOut int) *ir.Node {
	b := ir.NewBuilder(op)
	vals := make([]*ir.Value, len(in))
	for i, t := range in {
		if t != nil {
			vals[i] = b.Input(fmt.Sprint("x", i), t.DType, ir.ShapeOf(t.Shape))
		}
	}
	b.OpN(op, nOut, attrs, vals...)
	return b.G.Nodes[0]
}

// refRun runs the reference kernel of n.
func refRun(t *testing.T, n *ir.Node, in []*ir.Tensor) []*ir.Tensor {
	out, err := refRunErr(n, in)
	require.NoError(t, err)
	return out
}

// refRunErr runs n's reference kernel and returns its error.
func refRunErr(n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	k, ok := ref.Lookup(n.Op)
	if !ok {
		return nil, fmt.Errorf("no reference kernel for %s", n.Op)
	}
	return k(&ref.Context{Ctx: context.Background(), Env: backends.NewEnv(nil)}, n, in)
}

func requireClose(t *testing.T, want, got *ir.Tensor, tol float64) {
	t.Helper()
	require.Equal(t, want.DType, got.DType)
	require.Equal(t, want.Shape, got.Shape)
	if want.DType != ir.Float32 {
		require.Equal(t, want.Data, got.Data)
		return
	}
	w, g := want.Float32s(), got.Float32s()
	for i := range w {
		d := math.Abs(float64(w[i]) - float64(g[i]))
		if d > tol*math.Max(1, math.Abs(float64(w[i]))) && !(math.IsNaN(float64(w[i])) && math.IsNaN(float64(g[i]))) {
			t.Fatalf("element %d: got %v, want %v (tolerance %g)", i, g[i], w[i], tol)
		}
	}
}

func runIntoCase(t *testing.T, tc intoCase) {
	n := nodeN(tc.op, tc.attrs, tc.in, max(tc.nout, 1))
	want := refRun(t, n, tc.in)
	out := make([]*ir.Tensor, len(want))
	for i, w := range want {
		out[i] = ir.NewTensor(w.DType, w.Shape)
		for j := range out[i].Data {
			out[i].Data[j] = 0xAB // garbage: the kernel must overwrite everything
		}
	}
	k, err := buildIntoWorkers(n, tc.in, out, tc.consts, tc.pool)
	require.NoError(t, err)
	require.NotNil(t, k, "the into kernel declined")
	require.NoError(t, k(tc.in, out))
	tol := tc.tol
	if tol == 0 {
		tol = 1e-6
	}
	for i := range want {
		requireClose(t, want[i], out[i], tol)
	}
}

func TestIntoKernelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	f := func(shape ...int64) *ir.Tensor { return randF32(r, shape...) }
	var cases []intoCase
	for _, op := range []string{"Relu", "Sigmoid", "Tanh", "Gelu", "Erf", "Exp", "Neg", "Abs", "LeakyRelu", "HardSigmoid", "HardSwish", "Floor", "Ceil"} {
		cases = append(cases, intoCase{name: op, op: op, in: []*ir.Tensor{f(3, 5, 7)}})
	}
	pos := f(4, 9)
	for i, v := range pos.Float32s() {
		pos.Float32s()[i] = float32(math.Abs(float64(v))) + 0.1
	}
	cases = append(cases,
		intoCase{name: "Sqrt", op: "Sqrt", in: []*ir.Tensor{pos}},
		intoCase{name: "Log", op: "Log", in: []*ir.Tensor{pos}},
		intoCase{name: "Reciprocal", op: "Reciprocal", in: []*ir.Tensor{pos}},
		intoCase{name: "GeluTanh", op: "Gelu", attrs: []ir.AttrOption{ir.Str("approximate", "tanh")}, in: []*ir.Tensor{f(17)}},
		intoCase{name: "GeluLong", op: "Gelu", in: []*ir.Tensor{f(3, 129)}},
		intoCase{name: "SiLU", op: "SiLU", in: []*ir.Tensor{f(2, 63)}},
		intoCase{name: "SigmoidLong", op: "Sigmoid", in: []*ir.Tensor{f(5, 33)}},
		intoCase{name: "LeakyReluAlpha", op: "LeakyRelu", attrs: []ir.AttrOption{ir.Float("alpha", 0.3)}, in: []*ir.Tensor{f(2, 3)}},
		intoCase{name: "ReluScalar", op: "Relu", in: []*ir.Tensor{f()}},
	)
	for _, op := range []string{"Add", "Sub", "Mul", "Div"} {
		for _, sh := range [][2][]int64{
			{{3, 5}, {3, 5}}, {{2, 3, 5}, {5}}, {{2, 3, 5}, {3, 1}}, {{1}, {4, 7}}, {{4, 1, 3}, {1, 5, 1}}, {{}, {}}, {{1, 3, 6, 1}, {7, 1, 1, 5}},
		} {
			cases = append(cases, intoCase{name: fmt.Sprint(op, sh), op: op, in: []*ir.Tensor{f(sh[0]...), f(sh[1]...)}})
		}
	}
	for _, sh := range [][2][]int64{{{3, 5}, {5, 7}}, {{2, 3, 5}, {5, 4}}, {{5}, {5, 3}}, {{2, 3, 5}, {5}}, {{7}, {7}}, {{2, 1, 3, 4}, {5, 4, 2}}, {{1, 9}, {9, 1}}} {
		cases = append(cases, intoCase{name: fmt.Sprint("MatMul", sh), op: "MatMul", in: []*ir.Tensor{f(sh[0]...), f(sh[1]...)}, tol: 1e-5})
	}
	for _, c := range []struct {
		shape []int64
		attrs []ir.AttrOption
	}{
		{[]int64{3, 7}, nil},
		{[]int64{2, 3, 5}, []ir.AttrOption{ir.Int("axis", 1)}},
		{[]int64{2, 3, 5}, []ir.AttrOption{ir.Int("axis", 0)}},
		{[]int64{2, 3, 5}, []ir.AttrOption{ir.Int("legacy_axis", 1), ir.Int("axis", 1)}},
		// contiguous rows of every tail length of the vector kernels
		{[]int64{3, 1}, nil}, {[]int64{2, 15}, nil}, {[]int64{2, 17}, nil}, {[]int64{3, 63}, nil}, {[]int64{2, 129}, nil},
		{[]int64{8, 150, 129}, nil}, // rows shared on the pool
	} {
		cases = append(cases, intoCase{name: fmt.Sprint("Softmax", c.shape, len(c.attrs)), op: "Softmax", attrs: c.attrs, in: []*ir.Tensor{f(c.shape...)}})
	}
	cases = append(cases,
		intoCase{name: "LayerNorm", op: "LayerNormalization", in: []*ir.Tensor{f(2, 3, 9), f(9), f(9)}, tol: 1e-5},
		intoCase{name: "LayerNormTails", op: "LayerNormalization", in: []*ir.Tensor{f(3, 17), f(17), f(17)}, tol: 1e-5},
		intoCase{name: "LayerNormWide", op: "LayerNormalization", in: []*ir.Tensor{f(2, 129), f(129), nil}, tol: 1e-5},
		intoCase{name: "LayerNormBERT", op: "LayerNormalization", in: []*ir.Tensor{f(3, 768), f(768), f(768)}, tol: 1e-5},
		intoCase{name: "LayerNormPool", op: "LayerNormalization", in: []*ir.Tensor{f(1, 200, 768), f(768), f(768)}, tol: 1e-5},
		intoCase{name: "LayerNormAxis", op: "LayerNormalization", attrs: []ir.AttrOption{ir.Int("axis", 1), ir.Float("epsilon", 1e-3)}, in: []*ir.Tensor{f(2, 3, 5), f(3, 5), nil}, tol: 1e-5},
		intoCase{name: "Reshape", op: "Reshape", in: []*ir.Tensor{f(2, 3, 4), i64([]int64{2}, 4, -1)}, consts: []bool{false, true}},
		intoCase{name: "Flatten", op: "Flatten", attrs: []ir.AttrOption{ir.Int("axis", 2)}, in: []*ir.Tensor{f(2, 3, 4, 5)}},
		intoCase{name: "Squeeze", op: "Squeeze", in: []*ir.Tensor{f(2, 1, 3), i64([]int64{1}, 1)}, consts: []bool{false, true}},
		intoCase{name: "Unsqueeze", op: "Unsqueeze", in: []*ir.Tensor{f(2, 3), i64([]int64{2}, 0, 3)}, consts: []bool{false, true}},
		intoCase{name: "Identity", op: "Identity", in: []*ir.Tensor{i64([]int64{3}, 1, 2, 3)}},
		intoCase{name: "Transpose", op: "Transpose", in: []*ir.Tensor{f(2, 3, 4)}},
		intoCase{name: "TransposePerm", op: "Transpose", attrs: []ir.AttrOption{ir.Ints("perm", 0, 2, 3, 1)}, in: []*ir.Tensor{f(2, 3, 5, 7)}},
		intoCase{name: "TransposeHeads", op: "Transpose", attrs: []ir.AttrOption{ir.Ints("perm", 0, 2, 1, 3)}, in: []*ir.Tensor{f(1, 7, 3, 17)}},
		intoCase{name: "TransposeHeadsPool", op: "Transpose", attrs: []ir.AttrOption{ir.Ints("perm", 0, 2, 1, 3)}, in: []*ir.Tensor{f(1, 128, 12, 64)}},
		intoCase{name: "TransposePool2D", op: "Transpose", attrs: []ir.AttrOption{ir.Ints("perm", 1, 0)}, in: []*ir.Tensor{f(300, 257)}},
		intoCase{name: "ReshapePool", op: "Reshape", in: []*ir.Tensor{f(300, 301), i64([]int64{1}, -1)}, consts: []bool{false, true}},
		intoCase{name: "TransposeUnitDims", op: "Transpose", attrs: []ir.AttrOption{ir.Ints("perm", 3, 1, 0, 2)}, in: []*ir.Tensor{f(1, 5, 1, 6)}},
		intoCase{name: "TransposeMerged", op: "Transpose", attrs: []ir.AttrOption{ir.Ints("perm", 2, 3, 0, 1)}, in: []*ir.Tensor{f(2, 3, 4, 5)}},
		intoCase{name: "TransposeRank6", op: "Transpose", attrs: []ir.AttrOption{ir.Ints("perm", 5, 0, 3, 1, 4, 2)}, in: []*ir.Tensor{f(2, 3, 2, 3, 2, 3)}},
		intoCase{name: "TransposeAllUnit", op: "Transpose", attrs: []ir.AttrOption{ir.Ints("perm", 1, 0)}, in: []*ir.Tensor{f(1, 1)}},
		intoCase{name: "TransposeI64", op: "Transpose", attrs: []ir.AttrOption{ir.Ints("perm", 1, 0)}, in: []*ir.Tensor{i64([]int64{2, 3}, 1, 2, 3, 4, 5, 6)}},
		intoCase{name: "Concat0", op: "Concat", attrs: []ir.AttrOption{ir.Int("axis", 0)}, in: []*ir.Tensor{f(2, 3), f(1, 3), f(4, 3)}},
		intoCase{name: "Concat-1", op: "Concat", attrs: []ir.AttrOption{ir.Int("axis", -1)}, in: []*ir.Tensor{f(2, 3, 1), f(2, 3, 5), f(2, 3, 0)}},
		intoCase{name: "Gather0", op: "Gather", in: []*ir.Tensor{f(5, 4), i64([]int64{2, 3}, 0, 4, -1, 2, 2, 1)}},
		intoCase{name: "Gather1", op: "Gather", attrs: []ir.AttrOption{ir.Int("axis", 1)}, in: []*ir.Tensor{f(2, 5, 3), i64([]int64{3}, 4, 0, -5)}},
		intoCase{name: "GatherScalar", op: "Gather", in: []*ir.Tensor{f(6, 2), i64(nil, 3)}},
		intoCase{name: "GAP", op: "GlobalAveragePool", in: []*ir.Tensor{f(2, 3, 5, 7)}},
		intoCase{name: "GMP", op: "GlobalMaxPool", in: []*ir.Tensor{f(2, 3, 5)}},
	)
	convs := []struct {
		x, w  []int64
		bias  bool
		attrs []ir.AttrOption
	}{
		{[]int64{1, 3, 7, 9}, []int64{4, 3, 3, 3}, true, nil},
		{[]int64{2, 4, 8, 7}, []int64{6, 2, 3, 2}, false, []ir.AttrOption{ir.Int("group", 2), ir.Ints("pads", 1, 0, 2, 1), ir.Ints("strides", 2, 1)}},
		{[]int64{1, 2, 9, 9}, []int64{3, 2, 3, 3}, true, []ir.AttrOption{ir.Ints("dilations", 2, 2), ir.Ints("pads", 2, 2, 2, 2), ir.Ints("strides", 2, 3)}},
		{[]int64{1, 3, 10, 11}, []int64{5, 3, 4, 3}, true, []ir.AttrOption{ir.Str("auto_pad", "SAME_UPPER"), ir.Ints("strides", 2, 2)}},
		{[]int64{1, 3, 10, 11}, []int64{5, 3, 4, 3}, false, []ir.AttrOption{ir.Str("auto_pad", "SAME_LOWER")}},
		{[]int64{2, 3, 11}, []int64{4, 3, 3}, true, []ir.AttrOption{ir.Ints("pads", 1, 2), ir.Ints("strides", 2)}},
		{[]int64{1, 8, 5, 5}, []int64{8, 1, 3, 3}, true, []ir.AttrOption{ir.Int("group", 8), ir.Ints("pads", 1, 1, 1, 1)}},
		{[]int64{1, 16, 6, 6}, []int64{7, 16, 1, 1}, true, nil},
	}
	for i, c := range convs {
		in := []*ir.Tensor{f(c.x...), f(c.w...)}
		if c.bias {
			in = append(in, f(c.w[0]))
		}
		cases = append(cases, intoCase{name: fmt.Sprint("Conv", i), op: "Conv", attrs: c.attrs, in: in, consts: []bool{false, true, true}, tol: 1e-5})
	}
	pools := []struct {
		x     []int64
		attrs []ir.AttrOption
	}{
		{[]int64{1, 3, 8, 8}, []ir.AttrOption{ir.Ints("kernel_shape", 2, 2), ir.Ints("strides", 2, 2)}},
		{[]int64{2, 2, 7, 9}, []ir.AttrOption{ir.Ints("kernel_shape", 3, 3), ir.Ints("strides", 2, 2), ir.Ints("pads", 1, 1, 1, 1)}},
		{[]int64{1, 2, 7, 8}, []ir.AttrOption{ir.Ints("kernel_shape", 3, 2), ir.Ints("strides", 2, 3), ir.Int("ceil_mode", 1)}},
		{[]int64{1, 2, 6, 7}, []ir.AttrOption{ir.Ints("kernel_shape", 3, 3), ir.Str("auto_pad", "SAME_UPPER"), ir.Ints("strides", 2, 2)}},
		{[]int64{1, 2, 11}, []ir.AttrOption{ir.Ints("kernel_shape", 3), ir.Ints("pads", 1, 1), ir.Ints("strides", 2)}},
		{[]int64{1, 2, 7, 7}, []ir.AttrOption{ir.Ints("kernel_shape", 3, 3), ir.Ints("pads", 1, 1, 1, 1), ir.Int("count_include_pad", 1)}},
		{[]int64{1, 2, 8, 7}, []ir.AttrOption{ir.Ints("kernel_shape", 2, 3), ir.Ints("pads", 1, 0, 1, 2), ir.Int("ceil_mode", 1), ir.Ints("strides", 2, 2), ir.Int("count_include_pad", 1)}},
	}
	for i, c := range pools {
		for _, op := range []string{"MaxPool", "AveragePool"} {
			cases = append(cases, intoCase{name: fmt.Sprint(op, i), op: op, attrs: c.attrs, in: []*ir.Tensor{f(c.x...)}})
		}
	}
	cases = append(cases, intoCase{name: "MaxPoolDilated", op: "MaxPool", attrs: []ir.AttrOption{ir.Ints("kernel_shape", 2, 2), ir.Ints("dilations", 2, 2), ir.Ints("pads", 1, 1, 1, 1)}, in: []*ir.Tensor{f(1, 2, 7, 6)}})
	for _, act := range []string{"", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Gelu", "GeluTanh", "SiLU", "Clip"} {
		attrs := []ir.AttrOption{ir.Str("activation", act)}
		if act == "LeakyRelu" || act == "Clip" {
			attrs = append(attrs, ir.Float("activation_alpha", -0.2), ir.Float("activation_beta", 0.4))
		}
		cases = append(cases,
			intoCase{name: "FusedMatMul" + act, op: "FusedMatMul", attrs: attrs, in: []*ir.Tensor{f(2, 3, 5), f(5, 7), f(7)}, tol: 1e-5},
			intoCase{name: "FusedConv" + act, op: "FusedConv", attrs: append(attrs, ir.Ints("pads", 1, 1, 1, 1)),
				in: []*ir.Tensor{f(1, 3, 6, 5), f(4, 3, 3, 3), f(4), f(1, 4, 6, 5)}, tol: 1e-5})
	}
	cases = append(cases,
		intoCase{name: "FusedMatMulNoBias", op: "FusedMatMul", in: []*ir.Tensor{f(4, 5), f(5, 3)}, tol: 1e-5},
		intoCase{name: "FusedMatMulRowBias", op: "FusedMatMul", attrs: []ir.AttrOption{ir.Str("activation", "Relu")}, in: []*ir.Tensor{f(2, 4, 5), f(5, 3), f(4, 1)}, tol: 1e-5},
		intoCase{name: "FusedConvNoBias", op: "FusedConv", attrs: []ir.AttrOption{ir.Str("activation", "Relu"), ir.Ints("strides", 2, 2)}, in: []*ir.Tensor{f(1, 2, 7, 7), f(3, 2, 3, 3), nil, f(1, 3, 3, 3)}, tol: 1e-5},
		intoCase{name: "FusedConvNoResidual", op: "FusedConv", attrs: []ir.AttrOption{ir.Str("activation", "Relu")}, in: []*ir.Tensor{f(1, 2, 7, 7), f(3, 2, 3, 3), f(3)}, tol: 1e-5},
	)
	cases = append(cases,
		intoCase{name: "SplitEqual", op: "Split", attrs: []ir.AttrOption{ir.Int("axis", 1), ir.Int("num_outputs", 3)}, in: []*ir.Tensor{f(2, 6, 3)}, nout: 3},
		intoCase{name: "SplitSizes", op: "Split", attrs: []ir.AttrOption{ir.Int("axis", -1)}, in: []*ir.Tensor{f(2, 3, 7), i64([]int64{3}, 2, 4, 1)}, consts: []bool{false, true}, nout: 3},
	)
	boolMask := func(shape ...int64) *ir.Tensor {
		m := ir.NewTensor(ir.Bool, shape)
		for i := range m.Data {
			if r.IntN(4) != 0 {
				m.Data[i] = 1
			}
		}
		return m
	}
	for _, c := range []struct {
		name  string
		in    []*ir.Tensor
		attrs []ir.AttrOption
	}{
		{"plain", []*ir.Tensor{f(2, 3, 5, 8), f(2, 3, 7, 8), f(2, 3, 7, 6)}, nil},
		{"gqa causal", []*ir.Tensor{f(1, 4, 5, 8), f(1, 2, 5, 8), f(1, 2, 5, 3)}, []ir.AttrOption{ir.Int("is_causal", 1)}},
		{"causal longer keys", []*ir.Tensor{f(1, 2, 3, 4), f(1, 2, 7, 4), f(1, 2, 7, 4)}, []ir.AttrOption{ir.Int("is_causal", 1), ir.Float("scale", 0.3)}},
		{"float mask", []*ir.Tensor{f(2, 2, 4, 8), f(2, 2, 6, 8), f(2, 2, 6, 8), f(2, 1, 4, 6)}, nil},
		{"bool mask", []*ir.Tensor{f(1, 2, 4, 8), f(1, 2, 6, 8), f(1, 2, 6, 8), boolMask(6)}, nil},
		{"bool mask rows", []*ir.Tensor{f(1, 2, 4, 8), f(1, 2, 6, 8), f(1, 2, 6, 8), boolMask(1, 1, 4, 6)}, []ir.AttrOption{ir.Int("is_causal", 1)}},
	} {
		cases = append(cases, intoCase{name: "Attention " + c.name, op: "Attention", attrs: c.attrs, in: c.in, tol: 1e-5})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runIntoCase(t, tc) })
	}
	// Convolutions again on the direct path (no im2col scratch).
	saved := maxIm2col
	maxIm2col = 0
	defer func() { maxIm2col = saved }()
	for _, tc := range cases {
		if tc.op == "Conv" || tc.op == "FusedConv" {
			t.Run("direct "+tc.name, func(t *testing.T) { runIntoCase(t, tc) })
		}
	}
}

// TestIntoInPlace runs the elementwise kernels with the output sharing the
// bytes of an input, as the memory planner arranges.
func TestIntoInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		op    string
		in    []*ir.Tensor
		alias int
	}{
		{"Relu", []*ir.Tensor{randF32(r, 4, 5)}, 0},
		{"Gelu", []*ir.Tensor{randF32(r, 9)}, 0},
		{"Add", []*ir.Tensor{randF32(r, 3, 4), randF32(r, 4)}, 0},
		{"Mul", []*ir.Tensor{randF32(r, 1, 4), randF32(r, 3, 4)}, 1},
		{"Sub", []*ir.Tensor{randF32(r, 2, 3, 5), randF32(r, 2, 3, 5)}, 1},
	} {
		t.Run(tc.op, func(t *testing.T) {
			n := node(tc.op, nil, tc.in)
			want := refRun(t, n, tc.in)
			in := make([]*ir.Tensor, len(tc.in))
			for i, x := range tc.in {
				in[i] = x.Clone()
			}
			out := []*ir.Tensor{in[tc.alias]}
			k, err := buildIntoForTest(n, in, out, nil)
			require.NoError(t, err)
			require.NotNil(t, k)
			require.NoError(t, k(in, out))
			requireClose(t, want[0], out[0], 1e-6)
		})
	}
}

func TestIntoDeclines(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name  string
		op    string
		attrs []ir.AttrOption
		in    []*ir.Tensor
		out   []*ir.Tensor
	}{
		{"int matmul", "MatMul", nil, []*ir.Tensor{i64([]int64{2, 2}, 1, 2, 3, 4), i64([]int64{2, 2}, 1, 2, 3, 4)}, []*ir.Tensor{ir.NewTensor(ir.Int64, []int64{2, 2})}},
		{"gelu approximation", "Gelu", []ir.AttrOption{ir.Str("approximate", "erf?")}, []*ir.Tensor{randF32(r, 3)}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{3})}},
		{"wrong output shape", "Add", nil, []*ir.Tensor{randF32(r, 3), randF32(r, 3)}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{4})}},
		{"reshape by a computed shape", "Reshape", nil, []*ir.Tensor{randF32(r, 6), i64([]int64{2}, 2, 3)}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{2, 3})}},
		{"conv 3-D", "Conv", nil, []*ir.Tensor{randF32(r, 1, 1, 3, 3, 3), randF32(r, 1, 1, 2, 2, 2)}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{1, 1, 2, 2, 2})}},
		{"layernorm statistics", "LayerNormalization", nil, []*ir.Tensor{randF32(r, 2, 3), randF32(r, 3)}, []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{2, 3}), ir.NewTensor(ir.Float32, []int64{2, 1})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := node(tc.op, tc.attrs, tc.in)
			k, err := buildIntoForTest(n, tc.in, tc.out, nil)
			require.NoError(t, err)
			require.Nil(t, k)
		})
	}
}

func TestGatherIndexOutOfRange(t *testing.T) {
	x, idx := randF32(rand.New(rand.NewPCG(7, 8)), 4, 2), i64([]int64{2}, 1, 4)
	n := node("Gather", nil, []*ir.Tensor{x, idx})
	out := []*ir.Tensor{ir.NewTensor(ir.Float32, []int64{2, 2})}
	k, err := buildIntoForTest(n, []*ir.Tensor{x, idx}, out, nil)
	require.NoError(t, err)
	require.ErrorContains(t, k([]*ir.Tensor{x, idx}, out), "index 4 (element 1 of indices) is out of range")
}

// A builder registered first wins where it accepts and leaves the rest to
// the plain kernel.
func TestIntoBuilderPriority(t *testing.T) {
	const op = "Relu"
	saved := intoBuilders[op]
	t.Cleanup(func() { intoBuilders[op] = saved })
	fast := func(s *nodeSpec) intoKernel {
		if len(s.in[0].shape) != 1 {
			return nil
		}
		return func(in, out []*ir.Tensor, scratch []byte) error { return fmt.Errorf("fast kernel") }
	}
	registerIntoFirst(fast, op)
	r := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct {
		x    *ir.Tensor
		fast bool
	}{{randF32(r, 5), true}, {randF32(r, 2, 5), false}} {
		n := node(op, nil, []*ir.Tensor{tc.x})
		out := []*ir.Tensor{ir.NewTensor(ir.Float32, tc.x.Shape)}
		k, err := buildIntoForTest(n, []*ir.Tensor{tc.x}, out, nil)
		require.NoError(t, err)
		if err := k([]*ir.Tensor{tc.x}, out); tc.fast {
			require.ErrorContains(t, err, "fast kernel")
		} else {
			require.NoError(t, err)
		}
	}
}

// TestIntoFusedChain runs Fused elementwise bodies (as passes/fuse_chain
// builds them) through the chain interpreter (the SwiGLU bodies through
// buildFastSiLUMul's kernel) and the reference.
func TestIntoFusedChain(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	type bodyFn func(body *ir.Graph, in []*ir.Value) *ir.Value
	op := func(body *ir.Graph, o string, dt ir.DType, shape []int64, attrs ir.Attrs, in ...*ir.Value) *ir.Value {
		v := body.AddNode(o, "", in, 1, attrs).Outputs[0]
		v.DType, v.Shape = dt, ir.S(shape...)
		return v
	}
	scalar := func(body *ir.Graph, v float32) *ir.Value { return body.AddConst("", ir.FromFloat32(nil, []float32{v})) }
	mask := ir.NewTensor(ir.Bool, []int64{1, 1, 4, 5})
	for i := range mask.Data {
		mask.Data[i] = byte(r.IntN(2))
	}
	for _, tc := range []struct {
		name string
		in   []*ir.Tensor
		out  []int64
		dt   ir.DType
		body bodyFn
	}{
		{"scaled mask", []*ir.Tensor{randF32(r, 1, 2, 4, 5), mask}, []int64{1, 2, 4, 5}, ir.Float32, func(b *ir.Graph, in []*ir.Value) *ir.Value {
			d := op(b, "Div", ir.Float32, []int64{1, 2, 4, 5}, nil, in[0], scalar(b, 8))
			return op(b, "Where", ir.Float32, []int64{1, 2, 4, 5}, nil, in[1], d, scalar(b, -1e9))
		}},
		{"arithmetic", []*ir.Tensor{randF32(r, 3, 1), randF32(r, 4), randF32(r, 3, 4)}, []int64{3, 4}, ir.Float32, func(b *ir.Graph, in []*ir.Value) *ir.Value {
			s := op(b, "Sigmoid", ir.Float32, []int64{3, 1}, nil, in[0])
			m := op(b, "Mul", ir.Float32, []int64{3, 4}, nil, s, in[1])
			c := op(b, "Clip", ir.Float32, []int64{3, 4}, nil, in[2], scalar(b, -0.5), scalar(b, 0.7))
			a := op(b, "Add", ir.Float32, []int64{3, 4}, nil, m, c)
			p := op(b, "Pow", ir.Float32, []int64{3, 4}, nil, op(b, "Abs", ir.Float32, []int64{3, 4}, nil, a), scalar(b, 1.5))
			mx := op(b, "Max", ir.Float32, []int64{3, 4}, nil, p, op(b, "Tanh", ir.Float32, []int64{3, 4}, nil, in[2]))
			lt := op(b, "Less", ir.Bool, []int64{3, 4}, nil, mx, scalar(b, 0.2))
			cf := op(b, "Cast", ir.Float32, []int64{3, 4}, ir.Attrs{"to": {Kind: ir.AttrInt, Int: 1}}, lt)
			return op(b, "Sub", ir.Float32, []int64{3, 4}, nil, op(b, "Where", ir.Float32, []int64{3, 4}, nil, lt, mx, op(b, "Gelu", ir.Float32, []int64{3, 4}, nil, a)), cf)
		}},
		// large enough for several blocks, tails and the pool; dims that
		// merge (a, b) and that do not (c broadcasts over rows)
		{"embeddings", []*ir.Tensor{randF32(r, 1, 130, 300), randF32(r, 130, 300), randF32(r, 1, 1, 300)}, []int64{1, 130, 300}, ir.Float32, func(b *ir.Graph, in []*ir.Value) *ir.Value {
			a := op(b, "Add", ir.Float32, []int64{1, 130, 300}, nil, in[0], in[1])
			return op(b, "Add", ir.Float32, []int64{1, 130, 300}, nil, a, in[2])
		}},
		{"column broadcast", []*ir.Tensor{randF32(r, 37, 1), randF32(r, 37, 600), randF32(r, 60, 1, 1)}, []int64{60, 37, 600}, ir.Float32, func(b *ir.Graph, in []*ir.Value) *ir.Value {
			m := op(b, "Mul", ir.Float32, []int64{37, 600}, nil, in[0], in[1])
			return op(b, "Sub", ir.Float32, []int64{60, 37, 600}, nil, m, in[2])
		}},
		// SwiGLU (buildFastSiLUMul): both orders of the product, one
		// block and several with a tail (the pool).
		{"swiglu", []*ir.Tensor{randF32(r, 3, 7), randF32(r, 3, 7)}, []int64{3, 7}, ir.Float32, func(b *ir.Graph, in []*ir.Value) *ir.Value {
			return op(b, "Mul", ir.Float32, []int64{3, 7}, nil, op(b, "SiLU", ir.Float32, []int64{3, 7}, nil, in[0]), in[1])
		}},
		{"swiglu up first", []*ir.Tensor{randF32(r, 5, 2051), randF32(r, 5, 2051)}, []int64{5, 2051}, ir.Float32, func(b *ir.Graph, in []*ir.Value) *ir.Value {
			return op(b, "Mul", ir.Float32, []int64{5, 2051}, nil, in[0], op(b, "SiLU", ir.Float32, []int64{5, 2051}, nil, in[1]))
		}},
		{"bool output", []*ir.Tensor{randF32(r, 2, 5), randF32(r, 5), randF32(r, 2, 1)}, []int64{2, 5}, ir.Bool, func(b *ir.Graph, in []*ir.Value) *ir.Value {
			lt := op(b, "Less", ir.Bool, []int64{2, 5}, nil, in[0], in[1])
			ge := op(b, "GreaterOrEqual", ir.Bool, []int64{2, 5}, nil, in[0], in[2])
			return op(b, "Or", ir.Bool, []int64{2, 5}, nil, op(b, "And", ir.Bool, []int64{2, 5}, nil, lt, op(b, "Not", ir.Bool, []int64{2, 5}, nil, ge)), op(b, "Equal", ir.Bool, []int64{2, 5}, nil, lt, ge))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ir.NewBuilder("f")
			body := b.G.NewSubgraph("body")
			var outer, inner []*ir.Value
			for i, x := range tc.in {
				outer = append(outer, b.Input(fmt.Sprint("x", i), x.DType, ir.ShapeOf(x.Shape)))
				inner = append(inner, body.AddInput("", x.DType, ir.ShapeOf(x.Shape)))
			}
			body.Outputs = []*ir.Value{tc.body(body, inner)}
			y := b.OpA("Fused", []ir.AttrOption{ir.GraphAttr("body", body)}, outer...)
			y.DType, y.Shape = tc.dt, ir.ShapeOf(tc.out)
			n := b.G.Nodes[0]
			want := refRun(t, n, tc.in)
			out := []*ir.Tensor{ir.NewTensor(tc.dt, tc.out)}
			k, err := buildIntoForTest(n, tc.in, out, nil)
			require.NoError(t, err)
			require.NotNil(t, k, "the chain interpreter declined")
			require.NoError(t, k(tc.in, out))
			requireClose(t, want[0], out[0], 1e-6)
		})
	}
}
