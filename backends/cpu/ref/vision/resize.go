package vision

import (
	"fmt"
	"math"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

func init() { ref.Register("Resize", resizeKernel) }

// resizeParams are a Resize node's attributes.
type resizeParams struct {
	mode, ctm, nearestMode string
	cubicA, extrapolation  float64
	excludeOutside         bool
	antialias              bool
}

// axisPlan says how each output coordinate along one axis is computed from
// the input: a weighted sum of input positions, or the extrapolation value.
type axisPlan struct {
	idx    [][]int // input positions (already clamped into range)
	w      [][]float64
	extrap []bool
}

// optional returns in[i], or nil when it is absent or empty (opset 11
// models pass empty tensors for unused roi/scales).
func optional(in []*ir.Tensor, i int) *ir.Tensor {
	if i < len(in) && in[i] != nil && in[i].Len() > 0 {
		return in[i]
	}
	return nil
}

// resizeKernel implements Resize (canonical inputs X, roi?, scales?,
// sizes?) as the ONNX reference does: the output size along each resized
// axis comes from sizes (optionally fitted to keep the aspect ratio) or
// from floor(scale·in); each output coordinate is mapped back to an input
// coordinate by coordinate_transformation_mode, and the axes are
// interpolated one at a time, innermost first, with nearest, linear or
// cubic weights over the neighbours of that coordinate (the input being
// edge-padded). Integer outputs are truncated toward zero, as the
// reference's astype does.
func resizeKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := ref.Need(in, 0); err != nil {
		return nil, err
	}
	x := in[0]
	if !x.DType.Valid() || x.DType == ir.Bool {
		return nil, ref.Unsupported("Resize of dtype %v", x.DType)
	}
	p := resizeParams{
		mode:           n.AttrString("mode", "nearest"),
		ctm:            n.AttrString("coordinate_transformation_mode", "half_pixel"),
		nearestMode:    n.AttrString("nearest_mode", "round_prefer_floor"),
		cubicA:         float64(n.AttrFloat("cubic_coeff_a", -0.75)),
		extrapolation:  float64(n.AttrFloat("extrapolation_value", 0)),
		excludeOutside: n.AttrInt("exclude_outside", 0) != 0,
		antialias:      n.AttrInt("antialias", 0) != 0,
	}
	switch p.mode {
	case "nearest":
		if p.antialias {
			return nil, ref.Unsupported("antialias with mode nearest")
		}
		switch p.nearestMode {
		case "round_prefer_floor", "round_prefer_ceil", "floor", "ceil":
		default:
			return nil, ref.Unsupported("nearest_mode %q", p.nearestMode)
		}
	case "linear", "cubic":
	default:
		return nil, ref.Unsupported("Resize mode %q", p.mode)
	}
	switch p.ctm {
	case "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
		"tf_crop_and_resize", "tf_half_pixel_for_nn":
	default:
		return nil, ref.Unsupported("coordinate_transformation_mode %q", p.ctm)
	}

	r := len(x.Shape)
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if a := n.AttrInts("axes", nil); a != nil {
		var err error
		if axes, err = ref.NormAxes(a, r); err != nil {
			return nil, err
		}
	}
	scales, outSize, err := resizeShape(n, x.Shape, axes, optional(in, 2), optional(in, 3))
	if err != nil {
		return nil, err
	}
	// roi as (start, end) per dim; defaults to the whole extent.
	roiStart, roiEnd := make([]float64, r), make([]float64, r)
	for i := range roiEnd {
		roiEnd[i] = 1
	}
	if roi := optional(in, 1); roi != nil && p.ctm == "tf_crop_and_resize" {
		if roi.Len() != 2*len(axes) {
			return nil, fmt.Errorf("roi has %d values, want %d", roi.Len(), 2*len(axes))
		}
		for i, a := range axes {
			roiStart[a], roiEnd[a] = roi.Float64(i), roi.Float64(len(axes)+i)
		}
	} else if p.ctm == "tf_crop_and_resize" {
		return nil, fmt.Errorf("tf_crop_and_resize needs a roi input")
	}

	data := make([]float64, x.Len())
	for i := range data {
		data[i] = x.Float64(i)
	}
	shape := append([]int64{}, x.Shape...)
	for d := r - 1; d >= 0; d-- {
		plan, err := p.plan(int(x.Shape[d]), scales[d], int(outSize[d]), roiStart[d], roiEnd[d])
		if err != nil {
			return nil, fmt.Errorf("axis %d: %w", d, err)
		}
		data, shape = p.applyAxis(data, shape, d, plan)
	}
	out := ir.NewTensor(x.DType, shape)
	for i, v := range data {
		out.SetFloat64(i, v)
	}
	return []*ir.Tensor{out}, nil
}

// resizeShape returns the scale factor and output size of every dim.
func resizeShape(n *ir.Node, in []int64, axes []int, scalesT, sizesT *ir.Tensor) ([]float64, []int64, error) {
	r := len(in)
	scales := make([]float64, r)
	out := append([]int64{}, in...)
	for i := range scales {
		scales[i] = 1
	}
	switch {
	case scalesT != nil && sizesT != nil:
		return nil, nil, fmt.Errorf("both scales and sizes are given")
	case scalesT != nil:
		if scalesT.Len() != len(axes) || !scalesT.DType.IsFloat() {
			return nil, nil, fmt.Errorf("scales is %v, want %d floats", scalesT, len(axes))
		}
		for i, a := range axes {
			s := scalesT.Float64(i)
			if !(s > 0) || math.IsInf(s, 0) {
				return nil, nil, fmt.Errorf("scale %v for axis %d, want > 0", s, a)
			}
			scales[a] = s
			out[a] = int64(s * float64(in[a]))
		}
	case sizesT != nil:
		if sizesT.Len() != len(axes) || !sizesT.DType.IsInt() {
			return nil, nil, fmt.Errorf("sizes is %v, want %d integers", sizesT, len(axes))
		}
		for i, a := range axes {
			s := sizesT.Int64(i)
			if s < 0 {
				return nil, nil, fmt.Errorf("size %d for axis %d, want >= 0", s, a)
			}
			if in[a] == 0 {
				return nil, nil, fmt.Errorf("cannot resize the empty axis %d to %d", a, s)
			}
			out[a] = s
			scales[a] = float64(s) / float64(in[a])
		}
		policy := n.AttrString("keep_aspect_ratio_policy", "stretch")
		if policy != "stretch" {
			if policy != "not_larger" && policy != "not_smaller" {
				return nil, nil, ref.Unsupported("keep_aspect_ratio_policy %q", policy)
			}
			s := scales[axes[0]]
			for _, a := range axes {
				if policy == "not_larger" {
					s = math.Min(s, scales[a])
				} else {
					s = math.Max(s, scales[a])
				}
			}
			for _, a := range axes {
				scales[a] = s
				out[a] = int64(s*float64(in[a]) + 0.5) // round half up
			}
		}
	default:
		return nil, nil, fmt.Errorf("one of scales and sizes is required")
	}
	return scales, out, nil
}

// plan maps every output coordinate along one axis (input length in,
// output length out, scale factor scale, roi [start, end]) to its
// neighbours and weights.
func (p *resizeParams) plan(in int, scale float64, out int, start, end float64) (*axisPlan, error) {
	pl := &axisPlan{idx: make([][]int, out), w: make([][]float64, out), extrap: make([]bool, out)}
	outW := scale * float64(in) // the reference's (possibly fractional) output length
	for x := 0; x < out; x++ {
		fx := float64(x)
		var xo float64
		switch p.ctm {
		case "half_pixel":
			xo = (fx+0.5)/scale - 0.5
		case "half_pixel_symmetric":
			adj := float64(out) / outW
			offset := float64(in) / 2 * (1 - adj)
			xo = offset + (fx+0.5)/scale - 0.5
		case "pytorch_half_pixel":
			if out > 1 {
				xo = (fx+0.5)/scale - 0.5
			}
		case "align_corners":
			if outW != 1 {
				xo = fx * float64(in-1) / (outW - 1)
			}
		case "asymmetric":
			xo = fx / scale
		case "tf_half_pixel_for_nn":
			xo = (fx + 0.5) / scale
		case "tf_crop_and_resize":
			if outW == 1 {
				xo = (end - start) * float64(in-1) / 2
			} else {
				xo = fx * (end - start) * float64(in-1) / (outW - 1)
			}
			xo += start * float64(in-1)
			if xo < 0 || xo > float64(in-1) {
				pl.extrap[x] = true
				continue
			}
		}
		// i0 is the neighbour at or left of xo with ratio in (0, 1].
		i0 := int(math.Ceil(xo)) - 1
		ratio := xo - float64(i0)
		w := p.coeffs(ratio, scale)
		nw := len(w)
		// The nw nearest positions to xo in the input edge-padded by nw/2,
		// ties going to the smaller index: a window starting at
		// i0-nw/2+1, kept inside the padded range.
		pad := nw / 2
		first := min(max(i0-pad+1+pad, 0), in+2*pad-nw) - pad
		idx := make([]int, nw)
		sum := 0.0
		for j := range idx {
			k := first + j
			if p.excludeOutside && (k < 0 || k >= in) {
				w[j] = 0
			}
			sum += w[j]
			idx[j] = min(max(k, 0), in-1)
		}
		if p.excludeOutside {
			for j := range w {
				w[j] /= sum
			}
		}
		pl.idx[x], pl.w[x] = idx, w
	}
	return pl, nil
}

// coeffs returns the interpolation weights of the neighbours
// i0-n/2+1 ... i0+n/2 for a point at i0+ratio, ratio in (0, 1].
func (p *resizeParams) coeffs(ratio, scale float64) []float64 {
	switch p.mode {
	case "nearest":
		var right bool
		switch {
		case ratio == 1:
			right = true // an exact hit on i0+1
		case p.nearestMode == "round_prefer_floor":
			right = ratio > 0.5
		case p.nearestMode == "round_prefer_ceil":
			right = ratio >= 0.5
		case p.nearestMode == "floor":
			right = false
		case p.nearestMode == "ceil":
			right = true
		}
		if right {
			return []float64{0, 1}
		}
		return []float64{1, 0}
	case "linear":
		if !p.antialias {
			return []float64{1 - ratio, ratio}
		}
		// A triangle filter stretched by 1/scale when downsampling.
		s := math.Min(scale, 1)
		first := int(math.Floor(-1/s)) + 1
		w := make([]float64, 2-2*first)
		for j := range w {
			w[j] = math.Max(0, 1-math.Abs((float64(first+j)-ratio)*s))
		}
		return normalize(w)
	default: // cubic
		if !p.antialias {
			return []float64{cubic(ratio+1, p.cubicA), cubic(ratio, p.cubicA), cubic(1-ratio, p.cubicA), cubic(2-ratio, p.cubicA)}
		}
		s := math.Min(scale, 1)
		first := int(math.Floor(-2/s)) + 1
		w := make([]float64, 2-2*first)
		for j := range w {
			w[j] = cubic(s*(float64(first+j)-ratio), p.cubicA)
		}
		return normalize(w)
	}
}

// cubic is Keys' cubic convolution kernel with parameter a.
func cubic(x, a float64) float64 {
	x = math.Abs(x)
	switch {
	case x <= 1:
		return ((a+2)*x-(a+3))*x*x + 1
	case x < 2:
		return ((a*x-5*a)*x+8*a)*x - 4*a
	}
	return 0
}

// normalize scales w to sum to 1.
func normalize(w []float64) []float64 {
	sum := 0.0
	for _, v := range w {
		sum += v
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// applyAxis resamples data (of shape) along axis d by plan.
func (p *resizeParams) applyAxis(data []float64, shape []int64, d int, pl *axisPlan) ([]float64, []int64) {
	outer := int(ir.NumElements(shape[:d]))
	inner := int(ir.NumElements(shape[d+1:]))
	in, out := int(shape[d]), len(pl.idx)
	res := make([]float64, outer*out*inner)
	for o := 0; o < outer; o++ {
		for x := 0; x < out; x++ {
			dst := res[(o*out+x)*inner : (o*out+x+1)*inner]
			if pl.extrap[x] {
				for i := range dst {
					dst[i] = p.extrapolation
				}
				continue
			}
			for j, k := range pl.idx[x] {
				w := pl.w[x][j]
				src := data[(o*in+k)*inner : (o*in+k+1)*inner]
				for i := range dst {
					dst[i] += w * src[i]
				}
			}
		}
	}
	shape = append([]int64{}, shape...)
	shape[d] = int64(out)
	return res, shape
}
