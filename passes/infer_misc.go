package passes

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/ir"
)

// Quantization, resampling, recurrent layers, losses, signal windows and
// the remaining odd ops.

func init() {
	register(quantizeOp, "QuantizeLinear")
	register(dequantizeOp, "DequantizeLinear")
	register(dynQuantOp, "DynamicQuantizeLinear")
	register(resizeOp, "Resize", "Upsample")
	register(rnnOp, "RNN", "GRU", "LSTM")
	register(lossOp, "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss")
	register(windowOp, "HannWindow", "HammingWindow", "BlackmanWindow")
	register(melOp, "MelWeightMatrix")
	register(multinomialOp, "Multinomial")
	register(gridSampleOp, "GridSample")
	register(affineGridOp, "AffineGrid")
	register(col2ImOp, "Col2Im")
	register(detOp, "Det")
	register(dftOp, "DFT")
	register(stftOp, "STFT")
}

func quantizeOp(_ *state, n *ir.Node) ([]typ, error) {
	dt := in(n, 2).dt
	if n.In(2) == nil {
		dt = attrDType(n, "output_dtype", ir.Uint8)
		if n.AttrInt("output_dtype", 0) == 0 {
			dt = ir.Uint8
		}
	}
	return []typ{{dt, in(n, 0).sh}}, nil
}

func dequantizeOp(_ *state, n *ir.Node) ([]typ, error) {
	return []typ{{in(n, 1).dt, in(n, 0).sh}}, nil
}

func dynQuantOp(_ *state, n *ir.Node) ([]typ, error) {
	return []typ{{ir.Uint8, in(n, 0).sh}, {ir.Float32, ir.Scalar()}, {ir.Uint8, ir.Scalar()}}, nil
}

// resizeOp: output dims from sizes, or floor(dim * scale). Upsample (the
// older form, scales as input 1) follows the same rule.
func resizeOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x}, nil
	}
	r := len(x.sh)
	scalesIn, sizesIn := n.In(2), n.In(3)
	if n.Op == "Upsample" {
		scalesIn, sizesIn = n.In(1), nil
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if a := n.AttrInts("axes", nil); a != nil {
		var err error
		if axes, err = normAxes(a, r); err != nil {
			return nil, fmt.Errorf("Resize axes: %w", err)
		}
	}
	out := x.sh.Clone()
	unknownAxes := func() []typ {
		for _, a := range axes {
			out[a] = unk
		}
		return []typ{x.withShape(out)}
	}
	if sizesIn != nil && shapeLen(sizesIn) != 0 {
		if n.AttrString("keep_aspect_ratio_policy", "stretch") != "stretch" {
			return unknownAxes(), nil
		}
		sz, ok := s.ints(sizesIn)
		if !ok {
			return unknownAxes(), nil
		}
		if len(sz) != len(axes) {
			return nil, fmt.Errorf("Resize sizes %v for %d axes", sz, len(axes))
		}
		if err := nonNeg("Resize sizes", sz...); err != nil {
			return nil, err
		}
		for i, a := range axes {
			out[a] = dim(sz[i])
		}
		return []typ{x.withShape(out)}, nil
	}
	if scalesIn == nil || shapeLen(scalesIn) == 0 {
		return unknownAxes(), nil
	}
	sc, ok := s.floats(scalesIn)
	if !ok || n.AttrString("coordinate_transformation_mode", "") == "tf_crop_and_resize" {
		return unknownAxes(), nil
	}
	if len(sc) != len(axes) {
		return nil, fmt.Errorf("Resize scales %v for %d axes", sc, len(axes))
	}
	for i, a := range axes {
		switch d := out[a]; {
		case !(sc[i] > 0) || math.IsInf(sc[i], 0):
			return nil, fmt.Errorf("Resize scale %v", sc[i])
		case d.Known():
			// Scales are float32 in ONNX; multiply as the kernels do.
			out[a] = dim(int64(math.Floor(float64(d.Size) * sc[i])))
		case sc[i] != 1:
			out[a] = unk
		}
	}
	return []typ{x.withShape(out)}, nil
}

// rnnOp types RNN, GRU and LSTM: Y, Y_h (and Y_c for LSTM).
func rnnOp(_ *state, n *ir.Node) ([]typ, error) {
	x, w := in(n, 0), in(n, 1)
	dirs := int64(1)
	if n.AttrString("direction", "forward") == "bidirectional" {
		dirs = 2
	}
	hidden := unk
	if h := n.AttrInt("hidden_size", 0); h > 0 {
		hidden = dim(h)
	}
	gates := map[string]int64{"RNN": 1, "GRU": 3, "LSTM": 4}[n.Op]
	if w.sh != nil && len(w.sh) == 3 && w.sh[1].Known() && !hidden.Known() && w.sh[1].Size%gates == 0 {
		hidden = dim(w.sh[1].Size / gates)
	}
	seq, batch := unk, unk
	layout := n.AttrInt("layout", 0)
	if x.sh != nil {
		if len(x.sh) != 3 {
			return nil, fmt.Errorf("%s input has rank %d, want 3", n.Op, len(x.sh))
		}
		seq, batch = x.sh[0], x.sh[1]
		if layout != 0 {
			seq, batch = batch, seq
		}
	}
	y := ir.Shape{seq, dim(dirs), batch, hidden}
	yh := ir.Shape{dim(dirs), batch, hidden}
	if layout != 0 {
		y = ir.Shape{batch, seq, dim(dirs), hidden}
		yh = ir.Shape{batch, dim(dirs), hidden}
	}
	return []typ{{x.dt, y}, {x.dt, yh}, {x.dt, yh}}, nil
}

func lossOp(_ *state, n *ir.Node) ([]typ, error) {
	x, target := in(n, 0), in(n, 1)
	loss := typ{x.dt, ir.Scalar()}
	if n.AttrString("reduction", "mean") == "none" {
		loss.sh = target.sh
	}
	return []typ{loss, x}, nil
}

func windowOp(s *state, n *ir.Node) ([]typ, error) {
	dt := attrDType(n, "output_datatype", ir.Float32)
	if sz, ok := s.scalarInt(n.In(0)); ok && sz >= 0 {
		return []typ{{dt, ir.S(sz)}}, nil
	}
	return []typ{{dt, unknownShape(1)}}, nil
}

func melOp(s *state, n *ir.Node) ([]typ, error) {
	dt := attrDType(n, "output_datatype", ir.Float32)
	bins, ok1 := s.scalarInt(n.In(0))
	dft, ok2 := s.scalarInt(n.In(1))
	sh := unknownShape(2)
	if ok1 && bins >= 0 {
		sh[1] = dim(bins)
	}
	if ok2 && dft >= 0 {
		sh[0] = dim(dft/2 + 1)
	}
	return []typ{{dt, sh}}, nil
}

func multinomialOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	b := unk
	if x.sh != nil && len(x.sh) == 2 {
		b = x.sh[0]
	}
	ss := n.AttrInt("sample_size", 1)
	if err := nonNeg("Multinomial sample_size", ss); err != nil {
		return nil, err
	}
	return []typ{{attrDType(n, "dtype", ir.Int32), ir.Shape{b, dim(ss)}}}, nil
}

func gridSampleOp(_ *state, n *ir.Node) ([]typ, error) {
	x, grid := in(n, 0), in(n, 1)
	if x.sh == nil || grid.sh == nil {
		return []typ{x.withShape(nil)}, nil
	}
	if len(grid.sh) != len(x.sh) || len(x.sh) < 3 {
		return nil, fmt.Errorf("GridSample input rank %d, grid rank %d", len(x.sh), len(grid.sh))
	}
	out := cat(ir.Shape{x.sh[0], x.sh[1]}, grid.sh[1:len(grid.sh)-1])
	return []typ{x.withShape(out)}, nil
}

func affineGridOp(s *state, n *ir.Node) ([]typ, error) {
	theta := in(n, 0)
	size, ok := s.dimValues(n.In(1))
	if !ok {
		return []typ{theta.withShape(nil)}, nil
	}
	if len(size) < 4 {
		return nil, fmt.Errorf("AffineGrid size has %d entries", len(size))
	}
	sp := len(size) - 2
	out := cat(ir.Shape{size[0]}, size[2:], ir.Shape{dim(int64(sp))})
	return []typ{theta.withShape(out)}, nil
}

func col2ImOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	img, ok1 := s.ints(n.In(1))
	blk, ok2 := s.ints(n.In(2))
	if !ok1 || !ok2 || x.sh == nil || len(x.sh) != 3 || nonNeg("", img...) != nil {
		return []typ{x.withShape(nil)}, nil
	}
	c := unk
	if d := x.sh[1]; d.Known() {
		p := ir.NumElements(blk)
		if p <= 0 || d.Size%p != 0 {
			return nil, fmt.Errorf("Col2Im: %d not divisible by block size %d", d.Size, p)
		}
		c = dim(d.Size / p)
	}
	return []typ{x.withShape(cat(ir.Shape{x.sh[0], c}, ir.S(img...)))}, nil
}

func detOp(_ *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x}, nil
	}
	if len(x.sh) < 2 {
		return nil, fmt.Errorf("Det input has rank %d, want >= 2", len(x.sh))
	}
	return []typ{x.withShape(x.sh[:len(x.sh)-2].Clone())}, nil
}

// dftOp: the signal axis becomes dft_length (or its one-sided half) and
// the last axis holds (real, imaginary).
func dftOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	if x.sh == nil {
		return []typ{x}, nil
	}
	r := len(x.sh)
	if r < 2 {
		return nil, fmt.Errorf("DFT input has rank %d, want >= 2", r)
	}
	out := x.sh.Clone()
	out[r-1] = dim(2)
	axis := int64(-2)
	if a := n.In(2); a != nil {
		v, ok := s.scalarInt(a)
		if !ok {
			return []typ{x.withShape(append(unknownShape(r-1), dim(2)))}, nil
		}
		axis = v
	}
	ax, err := normAxis(axis, r)
	if err != nil || ax == r-1 {
		return nil, fmt.Errorf("DFT axis %d for rank %d", axis, r)
	}
	l := x.sh[ax]
	if v := n.In(1); v != nil {
		l = unk
		if k, ok := s.scalarInt(v); ok {
			if k < 1 {
				return nil, fmt.Errorf("DFT length %d", k)
			}
			l = dim(k)
		}
	}
	if n.AttrInt("onesided", 0) != 0 {
		if l.Known() {
			l = dim(l.Size/2 + 1)
		} else {
			l = unk
		}
	}
	out[ax] = l
	return []typ{x.withShape(out)}, nil
}

// stftOp: [batch, frames, bins, 2] with frames counted from frame_step
// and frame_length (or the window's length).
func stftOp(s *state, n *ir.Node) ([]typ, error) {
	x := in(n, 0)
	out := ir.Shape{unk, unk, unk, dim(2)}
	if x.sh != nil {
		if len(x.sh) != 3 {
			return nil, fmt.Errorf("STFT signal has rank %d, want 3", len(x.sh))
		}
		out[0] = x.sh[0]
	}
	fl := int64(-1)
	if v, ok := s.scalarInt(n.In(3)); ok {
		fl = v
	} else if w := n.In(2); w != nil && len(w.Shape) == 1 && w.Shape[0].Known() {
		fl = w.Shape[0].Size
	}
	step, okStep := s.scalarInt(n.In(1))
	if fl >= 1 {
		out[2] = dim(fl)
		if n.AttrInt("onesided", 1) != 0 {
			out[2] = dim(fl/2 + 1)
		}
		if okStep && step > 0 && x.sh != nil && x.sh[1].Known() && x.sh[1].Size >= fl {
			out[1] = dim((x.sh[1].Size-fl)/step + 1)
		}
	}
	return []typ{x.withShape(out)}, nil
}
