package signal

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/backends"
	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// runOp runs one node on the given inputs (nil: absent) in a graph of the
// given opset (0: unrecorded).
func runOp(t *testing.T, op string, opset int64, attrs ir.Attrs, ins ...*ir.Tensor) (*ir.Tensor, error) {
	t.Helper()
	g := ir.NewGraph("g")
	if opset > 0 {
		g.Opsets = map[string]int64{"": opset}
	}
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
	n := g.AddNode(op, "", vals, 1, attrs)
	if err := ref.RunNode(&ref.Context{Env: env}, n); err != nil {
		return nil, err
	}
	return env.Get(n.Outputs[0]), nil
}

func f32(shape []int64, v ...float64) *ir.Tensor { return ir.FromFloat64(ir.Float32, shape, v) }
func i64(v int64) *ir.Tensor                     { return ir.FromInt64(nil, []int64{v}) }
func intAttr(v int64) *ir.Attr                   { return &ir.Attr{Kind: ir.AttrInt, Int: v} }

func near(t *testing.T, want []float64, wantShape []int64, got *ir.Tensor) {
	t.Helper()
	require.Equal(t, wantShape, got.Shape)
	require.Equal(t, len(want), got.Len())
	for i, w := range want {
		require.InDelta(t, w, got.Float64(i), 1e-5*(1+math.Abs(w)), "element %d", i)
	}
}

func TestDFT(t *testing.T) {
	x1234 := f32([]int64{1, 4, 1}, 1, 2, 3, 4)
	tests := []struct {
		name  string
		opset int64
		attrs ir.Attrs
		ins   []*ir.Tensor
		shape []int64
		want  []float64
	}{
		{"real", 17, ir.Attrs{"axis": intAttr(1)}, []*ir.Tensor{x1234},
			[]int64{1, 4, 2}, []float64{10, 0, -2, 2, -2, 0, -2, -2}},
		{"onesided", 17, ir.Attrs{"onesided": intAttr(1)}, []*ir.Tensor{x1234},
			[]int64{1, 3, 2}, []float64{10, 0, -2, 2, -2, 0}},
		{"truncated", 17, nil, []*ir.Tensor{x1234, i64(2)},
			[]int64{1, 2, 2}, []float64{3, 0, -1, 0}},
		{"zero padded", 17, nil, []*ir.Tensor{x1234, i64(6)},
			[]int64{1, 6, 2}, []float64{10, 0, -3.5, -4.330127018922193, 2.5, 0.8660254037844386, -2, 0, 2.5, -0.8660254037844386, -3.5, 4.330127018922193}},
		{"inverse", 17, ir.Attrs{"inverse": intAttr(1)}, []*ir.Tensor{f32([]int64{1, 4, 2}, 10, 0, -2, 2, -2, 0, -2, -2)},
			[]int64{1, 4, 2}, []float64{1, 0, 2, 0, 3, 0, 4, 0}},
		{"complex", 17, nil, []*ir.Tensor{f32([]int64{1, 2, 2}, 1, 1, 0, 0)},
			[]int64{1, 2, 2}, []float64{1, 1, 1, 1}},
		{"axis 2", 17, ir.Attrs{"axis": intAttr(2)}, []*ir.Tensor{f32([]int64{1, 2, 2, 1}, 1, 2, 3, 4)},
			[]int64{1, 2, 2, 2}, []float64{3, 0, -1, 0, 7, 0, -1, 0}},
		{"axis -2 attribute", 17, ir.Attrs{"axis": intAttr(-2)}, []*ir.Tensor{f32([]int64{1, 2, 2, 1}, 1, 2, 3, 4)},
			[]int64{1, 2, 2, 2}, []float64{3, 0, -1, 0, 7, 0, -1, 0}},
		{"opset 20 axis input", 20, nil, []*ir.Tensor{f32([]int64{1, 2, 2, 1}, 1, 2, 3, 4), nil, i64(1)},
			[]int64{1, 2, 2, 2}, []float64{4, 0, 6, 0, -2, 0, -2, 0}},
		{"opset 20 default axis -2", 20, nil, []*ir.Tensor{f32([]int64{1, 2, 2, 1}, 1, 2, 3, 4)},
			[]int64{1, 2, 2, 2}, []float64{3, 0, -1, 0, 7, 0, -1, 0}},
		{"f64", 17, nil, []*ir.Tensor{ir.FromFloat64(ir.Float64, []int64{1, 4, 1}, []float64{1, 2, 3, 4})},
			[]int64{1, 4, 2}, []float64{10, 0, -2, 2, -2, 0, -2, -2}},
		{"f16", 17, nil, []*ir.Tensor{ir.FromFloat64(ir.Float16, []int64{1, 4, 1}, []float64{1, 2, 3, 4})},
			[]int64{1, 4, 2}, []float64{10, 0, -2, 2, -2, 0, -2, -2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runOp(t, "DFT", tc.opset, tc.attrs, tc.ins...)
			require.NoError(t, err)
			require.Equal(t, tc.ins[0].DType, out.DType)
			near(t, tc.want, tc.shape, out)
		})
	}
}

func TestDFTErrors(t *testing.T) {
	x := f32([]int64{1, 4, 1}, 1, 2, 3, 4)
	tests := []struct {
		name        string
		attrs       ir.Attrs
		ins         []*ir.Tensor
		unsupported bool
	}{
		{"axis on the complex dim", ir.Attrs{"axis": intAttr(2)}, []*ir.Tensor{x}, false},
		{"axis out of range", ir.Attrs{"axis": intAttr(3)}, []*ir.Tensor{x}, false},
		{"last dim 3", nil, []*ir.Tensor{f32([]int64{1, 1, 3}, 1, 2, 3)}, false},
		{"onesided complex", ir.Attrs{"onesided": intAttr(1)}, []*ir.Tensor{f32([]int64{1, 1, 2}, 1, 2)}, false},
		{"dft_length 0", nil, []*ir.Tensor{x, i64(0)}, false},
		{"dft_length float", nil, []*ir.Tensor{x, f32(nil, 2)}, false},
		{"integer input", nil, []*ir.Tensor{ir.FromInt64([]int64{1, 1, 1}, []int64{1})}, true},
		{"inverse onesided", ir.Attrs{"onesided": intAttr(1), "inverse": intAttr(1)}, []*ir.Tensor{x}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runOp(t, "DFT", 17, tc.attrs, tc.ins...)
			require.Error(t, err)
			require.Equal(t, tc.unsupported, errors.Is(err, ir.ErrUnsupported), "%v", err)
		})
	}
}

func TestSTFT(t *testing.T) {
	sig := f32([]int64{1, 6, 1}, 1, 2, 3, 4, 5, 6)
	// frame 0 = [1 2 3 4], frame 1 = [3 4 5 6].
	out, err := runOp(t, "STFT", 17, nil, sig, i64(2), nil, i64(4))
	require.NoError(t, err)
	near(t, []float64{10, 0, -2, 2, -2, 0, 18, 0, -2, 2, -2, 0}, []int64{1, 2, 3, 2}, out)

	// window [0 1 1 0]: frames [0 2 3 0] and [0 4 5 0].
	out, err = runOp(t, "STFT", 17, nil, sig, i64(2), f32([]int64{4}, 0, 1, 1, 0))
	require.NoError(t, err)
	near(t, []float64{5, 0, -3, -2, 1, 0, 9, 0, -5, -4, 1, 0}, []int64{1, 2, 3, 2}, out)

	// two-sided, frame_step 3: a single frame [1 2 3 4] (the second would overrun).
	out, err = runOp(t, "STFT", 17, ir.Attrs{"onesided": intAttr(0)}, sig, i64(3), nil, i64(4))
	require.NoError(t, err)
	near(t, []float64{10, 0, -2, 2, -2, 0, -2, -2}, []int64{1, 1, 4, 2}, out)

	for name, ins := range map[string][]*ir.Tensor{
		"no frame length":    {sig, i64(2)},
		"length mismatch":    {sig, i64(2), f32([]int64{4}, 1, 1, 1, 1), i64(3)},
		"frame too long":     {sig, i64(2), nil, i64(7)},
		"zero step":          {sig, i64(0), nil, i64(4)},
		"bad signal rank":    {f32([]int64{6}, 1, 2, 3, 4, 5, 6), i64(2), nil, i64(4)},
		"complex onesided":   {f32([]int64{1, 2, 2}, 1, 2, 3, 4), i64(1), nil, i64(2)},
		"float frame_step":   {sig, f32(nil, 2), nil, i64(4)},
		"window not 1-D":     {sig, i64(2), f32([]int64{2, 2}, 1, 1, 1, 1)},
		"missing frame_step": {sig, nil},
	} {
		_, err := runOp(t, "STFT", 17, nil, ins...)
		require.Error(t, err, name)
	}
}

func TestWindows(t *testing.T) {
	const h0 = 4.0 / 46 // Hamming at k=0: 25/46 - 21/46
	tests := []struct {
		op    string
		attrs ir.Attrs
		size  int64
		dt    ir.DType
		want  []float64
	}{
		{"HannWindow", nil, 4, ir.Float32, []float64{0, 0.5, 1, 0.5}},
		{"HannWindow", ir.Attrs{"periodic": intAttr(0)}, 5, ir.Float32, []float64{0, 0.5, 1, 0.5, 0}},
		{"HammingWindow", nil, 4, ir.Float32, []float64{h0, 25.0 / 46, 1, 25.0 / 46}},
		{"HammingWindow", ir.Attrs{"periodic": intAttr(0)}, 3, ir.Float32, []float64{h0, 1, h0}},
		{"BlackmanWindow", nil, 4, ir.Float32, []float64{0, 0.34, 1, 0.34}},
		{"BlackmanWindow", ir.Attrs{"output_datatype": intAttr(11)}, 4, ir.Float64, []float64{0, 0.34, 1, 0.34}},
		{"HannWindow", ir.Attrs{"output_datatype": intAttr(7)}, 4, ir.Int64, []float64{0, 0, 1, 0}},
		{"HannWindow", ir.Attrs{"output_datatype": intAttr(10)}, 4, ir.Float16, []float64{0, 0.5, 1, 0.5}},
		{"HannWindow", nil, 0, ir.Float32, []float64{}},
		{"HannWindow", nil, 1, ir.Float32, []float64{0}},
	}
	for _, tc := range tests {
		out, err := runOp(t, tc.op, 17, tc.attrs, i64(tc.size))
		require.NoError(t, err, tc.op)
		require.Equal(t, tc.dt, out.DType)
		near(t, tc.want, []int64{tc.size}, out)
	}
	// i32 size works too.
	out, err := runOp(t, "HannWindow", 17, nil, ir.FromFloat64(ir.Int32, nil, []float64{2}))
	require.NoError(t, err)
	near(t, []float64{0, 1}, []int64{2}, out)

	_, err = runOp(t, "HannWindow", 17, ir.Attrs{"output_datatype": intAttr(8)}, i64(4)) // string
	require.True(t, errors.Is(err, ir.ErrUnsupported))
	_, err = runOp(t, "HannWindow", 17, nil, i64(-1))
	require.Error(t, err)
	_, err = runOp(t, "HannWindow", 17, ir.Attrs{"periodic": intAttr(0)}, i64(1))
	require.Error(t, err)
	_, err = runOp(t, "HannWindow", 17, nil, f32(nil, 4))
	require.Error(t, err)
}

func TestMelWeightMatrix(t *testing.T) {
	// Band edges for 3 mel bins over [0, 4096] Hz, dft_length 16 at 8192 Hz
	// fall on spectrogram bins 0, 0, 1, 3, 5 (worked by hand from the mel
	// formula), giving these triangles:
	want := []float64{
		1, 0, 0,
		0, 1, 0,
		0, 0.5, 0.5,
		0, 0, 1,
		0, 0, 0.5,
		0, 0, 0,
		0, 0, 0,
		0, 0, 0,
		0, 0, 0,
	}
	ins := []*ir.Tensor{i64(3), i64(16), i64(8192), f32(nil, 0), f32(nil, 4096)}
	out, err := runOp(t, "MelWeightMatrix", 17, nil, ins...)
	require.NoError(t, err)
	require.Equal(t, ir.Float32, out.DType)
	near(t, want, []int64{9, 3}, out)

	out, err = runOp(t, "MelWeightMatrix", 17, ir.Attrs{"output_datatype": intAttr(11)}, ins...)
	require.NoError(t, err)
	require.Equal(t, ir.Float64, out.DType)

	// upper edge beyond Nyquist maps past the last bin.
	_, err = runOp(t, "MelWeightMatrix", 17, nil, i64(3), i64(16), i64(8192), f32(nil, 0), f32(nil, 20000))
	require.Error(t, err)
	_, err = runOp(t, "MelWeightMatrix", 17, nil, i64(0), i64(16), i64(8192), f32(nil, 0), f32(nil, 4096))
	require.Error(t, err)
	_, err = runOp(t, "MelWeightMatrix", 17, nil, i64(3), i64(16), i64(8192), i64(0), f32(nil, 4096))
	require.Error(t, err)
}
