package recurrent

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/ir"
)

// The expected values below were computed with an independent numpy
// transcription of the ONNX equations (float64), then pasted as literals.

// rnnBidi is a bidirectional RNN (forward Relu, reverse Tanh) over
// seq 3, batch 2, input 2, hidden 2 with sequence_lens [3, 2].
var rnnBidi = struct{ x, w, r, b, h0, y, yh []float64 }{
	x:  []float64{-0.17, 0.44, -1.0, -0.4, -0.71, -0.82, -0.63, -0.31, -0.21, 0.08, -0.16, 0.37},
	w:  []float64{-0.13, -0.95, 0.1, -0.13, -0.16, -0.34, -0.59, 0.24},
	r:  []float64{0.1, 0.42, -0.42, 0.02, 0.79, 0.79, -0.75, -0.59},
	b:  []float64{0.93, 0.09, 0.95, 0.43, 0.4, -0.57, 0.95, -0.99},
	h0: []float64{-0.56, 0.74, -0.59, 0.84, -0.02, 0.22, 0.53, 0.04},
	y: []float64{1.7389, 0.6958, 2.6838, 0.7366, 0.8505174113022019, -0.9099538148928911, 0.9316301086513201, -0.8450800564123543,
		3.217426, 0, 2.834152, 0, 0.9402302764656455, -0.9017235433863862, 0.9644839443498964, -0.9333529326186804,
		2.1530426, 0, 0, 0, 0.9077167732804426, -0.9107150600597972, 0, 0},
	yh: []float64{2.1530426, 0, 2.834152, 0, 0.8505174113022019, -0.9099538148928911, 0.9316301086513201, -0.8450800564123543},
}

func TestRNNBidirectional(t *testing.T) {
	c := rnnBidi
	attrs := ir.Attrs{"direction": str("bidirectional"), "activations": strs("Relu", "Tanh"), "hidden_size": intAttr(2)}
	out, err := runOp(t, "RNN", attrs, 2,
		f32(shape(3, 2, 2), c.x...), f32(shape(2, 2, 2), c.w...), f32(shape(2, 2, 2), c.r...),
		f32(shape(2, 4), c.b...), i32(3, 2), f32(shape(2, 2, 2), c.h0...))
	require.NoError(t, err)
	near(t, c.y, shape(3, 2, 2, 2), out[0])
	near(t, c.yh, shape(2, 2, 2), out[1])

	// layout 1: the same data with batch first.
	transpose := func(v []float64, dims []int, perm []int) []float64 {
		// generic transpose of a row-major array
		out := make([]float64, len(v))
		nd := len(dims)
		newDims := make([]int, nd)
		for i, p := range perm {
			newDims[i] = dims[p]
		}
		idx := make([]int, nd)
		for k := range v {
			rem := k
			for d := nd - 1; d >= 0; d-- {
				idx[d] = rem % dims[d]
				rem /= dims[d]
			}
			o := 0
			for i, p := range perm {
				o = o*newDims[i] + idx[p]
			}
			out[o] = v[k]
		}
		return out
	}
	attrs["layout"] = intAttr(1)
	out, err = runOp(t, "RNN", attrs, 2,
		f32(shape(2, 3, 2), transpose(c.x, []int{3, 2, 2}, []int{1, 0, 2})...),
		f32(shape(2, 2, 2), c.w...), f32(shape(2, 2, 2), c.r...), f32(shape(2, 4), c.b...), i32(3, 2),
		f32(shape(2, 2, 2), transpose(c.h0, []int{2, 2, 2}, []int{1, 0, 2})...))
	require.NoError(t, err)
	near(t, transpose(c.y, []int{3, 2, 2, 2}, []int{2, 0, 1, 3}), shape(2, 3, 2, 2), out[0])
	near(t, transpose(c.yh, []int{2, 2, 2}, []int{1, 0, 2}), shape(2, 2, 2), out[1])
}

var gruCase = struct{ x, w, r, b []float64 }{
	x: []float64{0.79, -0.34, 0.64, -0.92, -0.78, 0.19},
	w: []float64{-0.85, 0.56, -0.12, 0.45, 0.96, 0.08, 0, -0.86, -0.46, 0, 0.36, 0.61, -0.24, -0.87, -0.42, 0.82, -0.57, -0.1},
	r: []float64{0.75, 0.94, 0.74, 0.06, -0.53, -0.98, -0.14, -0.2, 0.05, -0.04, 0.11, 0.09},
	b: []float64{-0.98, 0, -0.01, -0.73, -0.72, -0.56, -0.16, -0.5, -0.83, -0.31, -0.67, 0.76},
}

func TestGRU(t *testing.T) {
	c := gruCase
	ins := func() []*ir.Tensor {
		return []*ir.Tensor{f32(shape(2, 1, 3), c.x...), f32(shape(1, 6, 3), c.w...), f32(shape(1, 6, 2), c.r...), f32(shape(1, 12), c.b...)}
	}
	tests := []struct {
		name  string
		attrs ir.Attrs
		y     []float64
	}{
		{"reverse", ir.Attrs{"direction": str("reverse")},
			[]float64{-0.8706953724325787, 0.4599379668479099, -0.35772221361570516, -0.10741403119722812}},
		{"reverse, linear_before_reset", ir.Attrs{"direction": str("reverse"), "linear_before_reset": intAttr(1)},
			[]float64{-0.7781107481278229, 0.08291771908515821, -0.13201976954036856, -0.5139507781047857}},
		{"clip and custom activations", ir.Attrs{"clip": flt(0.5), "activations": strs("HardSigmoid", "Softsign"),
			"activation_alpha": flts(0.3), "activation_beta": flts(0.4)},
			[]float64{-0.25, 0.24197, -0.3125, -0.026597630508056413}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runOp(t, "GRU", tc.attrs, 2, ins()...)
			require.NoError(t, err)
			near(t, tc.y, shape(2, 1, 1, 2), out[0])
			last := tc.y[2:] // forward: the last step
			if tc.attrs["direction"] != nil {
				last = tc.y[:2] // reverse: step 0 is processed last
			}
			near(t, last, shape(1, 1, 2), out[1])
		})
	}
}

var lstmCase = struct{ x, w, r, b, h0, c0, p []float64 }{
	x:  []float64{0.54, -0.96, 0.27, 0.5, 0, -0.55, -0.6, 0.52},
	w:  []float64{-0.64, -0.96, -0.07, 0.45, -0.16, -0.03, -0.97, -0.03, 0.88, 0.7, 0.46, -0.78, 0.79, 0.71, -0.67, 0.26},
	r:  []float64{-0.69, 0.48, -0.47, 0.07, -0.97, 0.84, 0.8, -0.93, 0.91, -0.73, -0.43, 0.21, 0.89, 0.71, -1.0, 0.04},
	b:  []float64{0.56, -0.52, 0.65, 0.93, 0.95, -0.09, 0.22, 0.55, 0.28, 0.44, -0.93, -0.4, -0.88, 0.71, -0.25, 0.36},
	h0: []float64{0.03, 0.55, 0.74, -0.98},
	c0: []float64{0.7, -0.64, -0.89, -0.28},
	p:  []float64{-0.55, 0.05, 0.1, -0.91, -0.28, -0.55},
}

func TestLSTM(t *testing.T) {
	c := lstmCase
	tests := []struct {
		name      string
		attrs     ir.Attrs
		seqLens   *ir.Tensor
		y, yh, yc []float64
	}{
		{"peepholes, sequence_lens", nil, i32(2, 1),
			[]float64{0.17210676545001571, -0.21412135550429603, -0.06852416140609419, -0.09046804181521645, -0.044136305855786546, -0.11005427385051997, 0, 0},
			[]float64{-0.044136305855786546, -0.11005427385051997, -0.06852416140609419, -0.09046804181521645},
			[]float64{-0.12711057718971186, -0.1508497277855198, -0.6120368019408948, -0.10504793558937633}},
		{"input_forget", ir.Attrs{"input_forget": intAttr(1)}, i32(2, 1),
			[]float64{0.13267743263001266, -0.1345514930492724, -0.0393862372564574, -0.10973557194232317, -0.07912470736795996, 0.026184940243278713, 0, 0},
			[]float64{-0.07912470736795996, 0.026184940243278713, -0.0393862372564574, -0.10973557194232317},
			[]float64{-0.21644958590970165, 0.03866508543091551, -0.31565022377512686, -0.12729205045777223}},
		{"clip", ir.Attrs{"clip": flt(0.3)}, nil,
			[]float64{0.1902968791405326, -0.10748649160809202, -0.1570375475355021, -0.06007540728602395, 0.0015813577901365422, -0.010404573589529826, -0.1581751694136294, 0.063326559556407},
			[]float64{0.0015813577901365422, -0.010404573589529826, -0.1581751694136294, 0.063326559556407},
			[]float64{0.0037159846350965364, -0.018114452341903717, -0.3527970340555992, 0.110689890938305}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runOp(t, "LSTM", tc.attrs, 3,
				f32(shape(2, 2, 2), c.x...), f32(shape(1, 8, 2), c.w...), f32(shape(1, 8, 2), c.r...),
				f32(shape(1, 16), c.b...), tc.seqLens, f32(shape(1, 2, 2), c.h0...), f32(shape(1, 2, 2), c.c0...),
				f32(shape(1, 6), c.p...))
			require.NoError(t, err)
			near(t, tc.y, shape(2, 1, 2, 2), out[0])
			near(t, tc.yh, shape(1, 2, 2), out[1])
			near(t, tc.yc, shape(1, 2, 2), out[2])
		})
	}
}

func TestRecurrentErrors(t *testing.T) {
	x := f32(shape(2, 1, 1), 1, 2)
	w := f32(shape(1, 1, 1), 1)
	r := f32(shape(1, 1, 1), 1)
	tests := []struct {
		name        string
		op          string
		attrs       ir.Attrs
		nOut        int
		ins         []*ir.Tensor
		unsupported bool
	}{
		{"integer X", "RNN", nil, 1, []*ir.Tensor{ir.FromInt64(shape(2, 1, 1), []int64{1, 2}), w, r}, true},
		{"mixed dtypes", "RNN", nil, 1, []*ir.Tensor{x, ir.FromFloat64(ir.Float64, shape(1, 1, 1), []float64{1}), r}, false},
		{"W shape", "RNN", nil, 1, []*ir.Tensor{x, f32(shape(1, 2, 1), 1, 1), r}, false},
		{"GRU W shape", "GRU", nil, 1, []*ir.Tensor{x, w, r}, false},
		{"B shape", "RNN", nil, 1, []*ir.Tensor{x, w, r, f32(shape(1, 1), 1)}, false},
		{"hidden_size", "RNN", ir.Attrs{"hidden_size": intAttr(3)}, 1, []*ir.Tensor{x, w, r}, false},
		{"direction", "RNN", ir.Attrs{"direction": str("sideways")}, 1, []*ir.Tensor{x, w, r}, false},
		{"bidirectional weights", "RNN", ir.Attrs{"direction": str("bidirectional")}, 1, []*ir.Tensor{x, w, r}, false},
		{"layout", "RNN", ir.Attrs{"layout": intAttr(2)}, 1, []*ir.Tensor{x, w, r}, false},
		{"X rank", "RNN", nil, 1, []*ir.Tensor{f32(shape(2, 1), 1, 2), w, r}, false},
		{"sequence_lens too long", "RNN", nil, 1, []*ir.Tensor{x, w, r, nil, i32(3)}, false},
		{"sequence_lens zero", "RNN", nil, 1, []*ir.Tensor{x, w, r, nil, i32(0)}, true},
		{"initial_h shape", "RNN", nil, 1, []*ir.Tensor{x, w, r, nil, nil, f32(shape(1, 2, 1), 0, 0)}, false},
		{"activation", "RNN", ir.Attrs{"activations": strs("Swish")}, 1, []*ir.Tensor{x, w, r}, true},
		{"RNN with 3 outputs", "RNN", nil, 3, []*ir.Tensor{x, w, r}, false},
		{"missing R", "RNN", nil, 1, []*ir.Tensor{x, w, nil}, false},
		{"negative clip", "RNN", ir.Attrs{"clip": flt(-1)}, 1, []*ir.Tensor{x, w, r}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runOp(t, tc.op, tc.attrs, tc.nOut, tc.ins...)
			require.Error(t, err)
			require.Equal(t, tc.unsupported, errors.Is(err, ir.ErrUnsupported), "%v", err)
		})
	}
}
