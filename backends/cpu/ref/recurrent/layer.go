package recurrent

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Input positions shared by RNN, GRU and LSTM.
const (
	inX = iota
	inW
	inR
	inB
	inSeqLens
	inInitialH
	inInitialC // LSTM only
	inP        // LSTM only
)

// layer is a recurrent op's inputs unpacked into float64 slices in one
// canonical order, whatever the layout attribute says.
type layer struct {
	gates                     int // 1 (RNN), 3 (GRU) or 4 (LSTM)
	seq, batch, input, hidden int
	numDir                    int
	layout                    int64
	reverse                   []bool // per direction
	dt                        ir.DType
	x                         []float64   // [seq][batch][input]
	w, r                      [][]float64 // per direction: [gates*hidden][input], [gates*hidden][hidden]
	wb, rb                    [][]float64 // per direction: [gates*hidden]
	p                         [][]float64 // per direction: [3*hidden] peepholes (LSTM), zeros if absent
	seqLens                   []int       // per batch entry
	h0, c0                    [][]float64 // per direction: [batch][hidden]
	clip                      float64     // 0: no clipping
	hasClip                   bool
}

// floatsOf copies a tensor's elements out as float64s.
func floatsOf(t *ir.Tensor) []float64 {
	out := make([]float64, t.Len())
	for i := range out {
		out[i] = t.Float64(i)
	}
	return out
}

// shapeIs reports an error unless t has exactly shape want.
func shapeIs(t *ir.Tensor, name string, want ...int) error {
	ok := len(t.Shape) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = t.Shape[i] == int64(want[i])
	}
	if !ok {
		return fmt.Errorf("%s has shape %v, want %v", name, t.Shape, want)
	}
	return nil
}

// perDir splits a [numDir, k...] tensor into numDir float64 slices.
func perDir(t *ir.Tensor, numDir int) [][]float64 {
	all := floatsOf(t)
	k := len(all) / numDir
	out := make([][]float64, numDir)
	for d := range out {
		out[d] = all[d*k : (d+1)*k]
	}
	return out
}

// zeros returns numDir zero slices of length k.
func zeros(numDir, k int) [][]float64 {
	out := make([][]float64, numDir)
	for d := range out {
		out[d] = make([]float64, k)
	}
	return out
}

// parseLayer validates and unpacks the inputs and attributes common to the
// recurrent ops; gates is the number of gate blocks stacked in W and R.
func parseLayer(n *ir.Node, in []*ir.Tensor, gates int, lstm bool) (*layer, error) {
	if err := ref.Need(in, inX, inW, inR); err != nil {
		return nil, err
	}
	get := func(i int) *ir.Tensor {
		if i < len(in) {
			return in[i]
		}
		return nil
	}
	x := in[inX]
	if !x.DType.IsFloat() {
		return nil, ref.Unsupported("input X of dtype %v", x.DType)
	}
	floatIns := []*ir.Tensor{in[inW], in[inR], get(inB), get(inInitialH)}
	if lstm {
		floatIns = append(floatIns, get(inInitialC), get(inP))
	}
	if err := ref.SameDType(x.DType, floatIns...); err != nil {
		return nil, err
	}
	l := &layer{gates: gates, dt: x.DType, layout: n.AttrInt("layout", 0)}
	if len(x.Shape) != 3 {
		return nil, fmt.Errorf("X has shape %v, want rank 3", x.Shape)
	}
	switch l.layout {
	case 0:
		l.seq, l.batch = int(x.Shape[0]), int(x.Shape[1])
	case 1:
		l.batch, l.seq = int(x.Shape[0]), int(x.Shape[1])
	default:
		return nil, fmt.Errorf("layout is %d, want 0 or 1", l.layout)
	}
	l.input = int(x.Shape[2])

	switch dir := n.AttrString("direction", "forward"); dir {
	case "forward":
		l.reverse = []bool{false}
	case "reverse":
		l.reverse = []bool{true}
	case "bidirectional":
		l.reverse = []bool{false, true}
	default:
		return nil, fmt.Errorf("direction %q, want forward, reverse or bidirectional", dir)
	}
	l.numDir = len(l.reverse)

	r := in[inR]
	if len(r.Shape) != 3 {
		return nil, fmt.Errorf("R has shape %v, want rank 3", r.Shape)
	}
	l.hidden = int(r.Shape[2])
	if hs := n.AttrInt("hidden_size", int64(l.hidden)); hs != int64(l.hidden) {
		return nil, fmt.Errorf("hidden_size is %d but R has shape %v", hs, r.Shape)
	}
	gh := gates * l.hidden
	if err := shapeIs(in[inW], "W", l.numDir, gh, l.input); err != nil {
		return nil, err
	}
	if err := shapeIs(r, "R", l.numDir, gh, l.hidden); err != nil {
		return nil, err
	}
	l.w, l.r = perDir(in[inW], l.numDir), perDir(r, l.numDir)
	l.wb, l.rb = zeros(l.numDir, gh), zeros(l.numDir, gh)
	if b := get(inB); b != nil {
		if err := shapeIs(b, "B", l.numDir, 2*gh); err != nil {
			return nil, err
		}
		for d, bd := range perDir(b, l.numDir) {
			l.wb[d], l.rb[d] = bd[:gh], bd[gh:]
		}
	}

	l.seqLens = make([]int, l.batch)
	for b := range l.seqLens {
		l.seqLens[b] = l.seq
	}
	if sl := get(inSeqLens); sl != nil {
		if !sl.DType.IsInt() {
			return nil, fmt.Errorf("sequence_lens is %v, want an integer type", sl.DType)
		}
		if err := shapeIs(sl, "sequence_lens", l.batch); err != nil {
			return nil, err
		}
		for b := range l.seqLens {
			v := sl.Int64(b)
			if v == 0 {
				return nil, ref.Unsupported("sequence_lens[%d] is 0", b)
			}
			if v < 0 || v > int64(l.seq) {
				return nil, fmt.Errorf("sequence_lens[%d] is %d, outside [1, %d]", b, v, l.seq)
			}
			l.seqLens[b] = int(v)
		}
	}

	var err error
	if l.h0, err = l.initialState(get(inInitialH), "initial_h"); err != nil {
		return nil, err
	}
	if lstm {
		if l.c0, err = l.initialState(get(inInitialC), "initial_c"); err != nil {
			return nil, err
		}
		l.p = zeros(l.numDir, 3*l.hidden)
		if p := get(inP); p != nil {
			if err := shapeIs(p, "P", l.numDir, 3*l.hidden); err != nil {
				return nil, err
			}
			l.p = perDir(p, l.numDir)
		}
	}

	l.x = make([]float64, l.seq*l.batch*l.input)
	for t := 0; t < l.seq; t++ {
		for b := 0; b < l.batch; b++ {
			src := (t*l.batch + b) * l.input
			if l.layout == 1 {
				src = (b*l.seq + t) * l.input
			}
			for k := 0; k < l.input; k++ {
				l.x[(t*l.batch+b)*l.input+k] = x.Float64(src + k)
			}
		}
	}

	if n.Has("clip") {
		l.hasClip, l.clip = true, float64(n.AttrFloat("clip", 0))
		if l.clip < 0 || math.IsNaN(l.clip) {
			return nil, fmt.Errorf("clip is %v, want a non-negative threshold", l.clip)
		}
	}
	return l, nil
}

// initialState unpacks initial_h or initial_c ([numDir, batch, hidden], or
// [batch, numDir, hidden] with layout 1) into per-direction [batch][hidden]
// slices; absent, the state starts at zero.
func (l *layer) initialState(t *ir.Tensor, name string) ([][]float64, error) {
	st := zeros(l.numDir, l.batch*l.hidden)
	if t == nil {
		return st, nil
	}
	want := []int{l.numDir, l.batch, l.hidden}
	if l.layout == 1 {
		want = []int{l.batch, l.numDir, l.hidden}
	}
	if err := shapeIs(t, name, want...); err != nil {
		return nil, err
	}
	for d := 0; d < l.numDir; d++ {
		for b := 0; b < l.batch; b++ {
			for j := 0; j < l.hidden; j++ {
				st[d][b*l.hidden+j] = t.Float64(l.stateIndex(d, b, j))
			}
		}
	}
	return st, nil
}

// stateIndex is the linear index of (direction d, batch b, unit j) in a
// state tensor (initial_h, Y_h, ...) of the op's layout.
func (l *layer) stateIndex(d, b, j int) int {
	if l.layout == 1 {
		return (b*l.numDir+d)*l.hidden + j
	}
	return (d*l.batch+b)*l.hidden + j
}

// yIndex is the linear index of (time t, direction d, batch b, unit j) in Y.
func (l *layer) yIndex(t, d, b, j int) int {
	if l.layout == 1 {
		return ((b*l.seq+t)*l.numDir+d)*l.hidden + j
	}
	return ((t*l.numDir+d)*l.batch+b)*l.hidden + j
}

// wx is W_g·x + Wb_g for gate block g, unit j of direction d.
func (l *layer) wx(d, g, j int, x []float64) float64 {
	row := l.w[d][(g*l.hidden+j)*l.input : (g*l.hidden+j+1)*l.input]
	s := l.wb[d][g*l.hidden+j]
	for k, v := range row {
		s += v * x[k]
	}
	return s
}

// rh is R_g·h + Rb_g for gate block g, unit j of direction d.
func (l *layer) rh(d, g, j int, h []float64) float64 {
	row := l.r[d][(g*l.hidden+j)*l.hidden : (g*l.hidden+j+1)*l.hidden]
	s := l.rb[d][g*l.hidden+j]
	for k, v := range row {
		s += v * h[k]
	}
	return s
}

// clamp applies the clip attribute to an activation's input.
func (l *layer) clamp(v float64) float64 {
	if l.hasClip {
		return math.Min(math.Max(v, -l.clip), l.clip)
	}
	return v
}

// cell advances one direction d by one time step: from input x, hidden h
// and cell c (nil except for LSTM) to the new h and c. It must not modify
// its arguments.
type cell func(d int, x, h, c []float64) (h2, c2 []float64)

// run applies the cell along every sequence in every direction and returns
// the outputs the node asks for, in the order Y, Y_h, Y_c. A reverse
// direction walks each batch entry's sequence from its own last valid step
// (sequence_lens) back to 0; Y is zero past a sequence's end, and Y_h / Y_c
// hold the state after the last valid step.
func (l *layer) run(nOut int, step cell) ([]*ir.Tensor, error) {
	maxOut := 2
	if l.c0 != nil {
		maxOut = 3
	}
	if nOut < 1 || nOut > maxOut {
		return nil, fmt.Errorf("node has %d outputs, want 1 to %d", nOut, maxOut)
	}
	yShape := []int64{int64(l.seq), int64(l.numDir), int64(l.batch), int64(l.hidden)}
	stShape := []int64{int64(l.numDir), int64(l.batch), int64(l.hidden)}
	if l.layout == 1 {
		yShape = []int64{int64(l.batch), int64(l.seq), int64(l.numDir), int64(l.hidden)}
		stShape = []int64{int64(l.batch), int64(l.numDir), int64(l.hidden)}
	}
	y := ir.NewTensor(l.dt, yShape) // zero-filled: padding past sequence ends
	yh := ir.NewTensor(l.dt, stShape)
	yc := ir.NewTensor(l.dt, stShape)
	for d := 0; d < l.numDir; d++ {
		for b := 0; b < l.batch; b++ {
			h := l.h0[d][b*l.hidden : (b+1)*l.hidden]
			var c []float64
			if l.c0 != nil {
				c = l.c0[d][b*l.hidden : (b+1)*l.hidden]
			}
			n := l.seqLens[b]
			for s := 0; s < n; s++ {
				t := s
				if l.reverse[d] {
					t = n - 1 - s
				}
				x := l.x[(t*l.batch+b)*l.input : (t*l.batch+b+1)*l.input]
				h, c = step(d, x, h, c)
				for j, v := range h {
					y.SetFloat64(l.yIndex(t, d, b, j), v)
				}
			}
			for j := 0; j < l.hidden; j++ {
				yh.SetFloat64(l.stateIndex(d, b, j), h[j])
				if c != nil {
					yc.SetFloat64(l.stateIndex(d, b, j), c[j])
				}
			}
		}
	}
	return []*ir.Tensor{y, yh, yc}[:nOut], nil
}
