package nn

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// axisGeom is the resolved geometry of one spatial axis of a sliding
// window: input size, kernel size, stride, dilation, begin/end padding and
// output size.
type axisGeom struct {
	In, K, Stride, Dil, PadB, PadE, Out int
}

// span is the extent of the dilated kernel.
func (a axisGeom) span() int { return (a.K-1)*a.Dil + 1 }

// resolveGeom reads strides, dilations, pads and auto_pad from n for a
// window of the given kernel over the spatial dims in, and computes each
// axis's output size per the ONNX Conv/pool formulas:
//
//	NOTSET: out = floor((in + padB + padE - span) / stride) + 1
//	        (ceil instead of floor with ceilMode, dropping a last window
//	        that would start inside the end padding)
//	VALID:  no padding, out = floor((in - span) / stride) + 1
//	SAME_*: out = ceil(in / stride), total = max(0, (out-1)*stride + span - in),
//	        SAME_UPPER puts total/2 first and the odd pad at the end,
//	        SAME_LOWER the other way round.
func resolveGeom(n *ir.Node, in, kernel []int64, ceilMode bool) ([]axisGeom, error) {
	r := len(in)
	if len(kernel) != r {
		return nil, fmt.Errorf("kernel_shape %v has %d dims, input has %d spatial dims", kernel, len(kernel), r)
	}
	for _, name := range []string{"strides", "dilations"} {
		if err := checkAttrLen(n, name, r); err != nil {
			return nil, err
		}
	}
	if err := checkAttrLen(n, "pads", 2*r); err != nil {
		return nil, err
	}
	strides := n.AttrInts("strides", nil)
	dils := n.AttrInts("dilations", nil)
	pads := n.AttrInts("pads", nil)
	autoPad := n.AttrString("auto_pad", "NOTSET")
	g := make([]axisGeom, r)
	for d := range g {
		a := axisGeom{In: int(in[d]), K: int(kernel[d]), Stride: 1, Dil: 1}
		if strides != nil {
			a.Stride = int(strides[d])
		}
		if dils != nil {
			a.Dil = int(dils[d])
		}
		if a.K <= 0 || a.Stride <= 0 || a.Dil <= 0 {
			return nil, fmt.Errorf("axis %d: kernel %d, stride %d, dilation %d must all be positive", d, a.K, a.Stride, a.Dil)
		}
		switch autoPad {
		case "NOTSET", "":
			if pads != nil {
				a.PadB, a.PadE = int(pads[d]), int(pads[d+r])
			}
			if a.PadB < 0 || a.PadE < 0 {
				return nil, fmt.Errorf("negative pads %v", pads)
			}
			num := a.In + a.PadB + a.PadE - a.span()
			if num < 0 {
				return nil, fmt.Errorf("axis %d: window span %d exceeds padded input %d", d, a.span(), a.In+a.PadB+a.PadE)
			}
			a.Out = num/a.Stride + 1
			if ceilMode {
				a.Out = (num+a.Stride-1)/a.Stride + 1
				if (a.Out-1)*a.Stride >= a.In+a.PadB {
					a.Out--
				}
			}
		case "VALID":
			num := a.In - a.span()
			if num < 0 {
				return nil, fmt.Errorf("axis %d: window span %d exceeds input %d (auto_pad VALID)", d, a.span(), a.In)
			}
			a.Out = num/a.Stride + 1
		case "SAME_UPPER", "SAME_LOWER":
			a.Out = (a.In + a.Stride - 1) / a.Stride
			total := max(0, (a.Out-1)*a.Stride+a.span()-a.In)
			small := total / 2
			if autoPad == "SAME_UPPER" {
				a.PadB, a.PadE = small, total-small
			} else {
				a.PadB, a.PadE = total-small, small
			}
		default:
			return nil, fmt.Errorf("unknown auto_pad %q", autoPad)
		}
		g[d] = a
	}
	return g, nil
}

// outShape returns the spatial output dims of g.
func outShape(g []axisGeom) []int64 {
	s := make([]int64, len(g))
	for d, a := range g {
		s[d] = int64(a.Out)
	}
	return s
}

// tap is one in-bounds kernel position of a window: k indexes the kernel
// (row-major over kernel dims), x the input (row-major over spatial dims).
type tap struct{ k, x int }

// windows lists, for every output position o (row-major over the output
// spatial dims), the in-bounds taps taps[start[o]:start[o+1]] and the
// number of taps inPad[o] that fall inside the padded input (what
// AveragePool with count_include_pad divides by).
type windows struct {
	inSize, outSize, kSize int
	start                  []int
	taps                   []tap
	inPad                  []int
}

// buildWindows enumerates the taps of every output position of g.
func buildWindows(g []axisGeom) *windows {
	r := len(g)
	w := &windows{inSize: 1, outSize: 1, kSize: 1}
	for _, a := range g {
		w.inSize *= a.In
		w.outSize *= a.Out
		w.kSize *= a.K
	}
	w.start = make([]int, 0, w.outSize+1)
	w.inPad = make([]int, 0, w.outSize)
	o := make([]int, r)
	k := make([]int, r)
	for range w.outSize {
		w.start = append(w.start, len(w.taps))
		padded := 0
		clear(k)
		for ki := 0; ki < w.kSize; ki++ {
			valid, inPadded, off := true, true, 0
			for d, a := range g {
				c := o[d]*a.Stride - a.PadB + k[d]*a.Dil
				if c < 0 || c >= a.In {
					valid = false
					if c < -a.PadB || c >= a.In+a.PadE {
						inPadded = false
					}
				}
				off = off*a.In + c
			}
			if valid {
				w.taps = append(w.taps, tap{k: ki, x: off})
			}
			if inPadded {
				padded++
			}
			odometer(k, g, func(a axisGeom) int { return a.K })
		}
		w.inPad = append(w.inPad, padded)
		odometer(o, g, func(a axisGeom) int { return a.Out })
	}
	w.start = append(w.start, len(w.taps))
	return w
}

// odometer advances the row-major multi-index idx over the dims size(g[d]).
func odometer(idx []int, g []axisGeom, size func(axisGeom) int) {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < size(g[d]) {
			return
		}
		idx[d] = 0
	}
}

// spatialInput checks that x has layout N, C, D1..Dn with n >= 1 and
// returns N, C and the spatial dims.
func spatialInput(op string, x *ir.Tensor) (int, int, []int64, error) {
	if len(x.Shape) < 3 {
		return 0, 0, nil, fmt.Errorf("%s input has shape %v, want N x C x D1 x ... (rank >= 3)", op, x.Shape)
	}
	return int(x.Shape[0]), int(x.Shape[1]), x.Shape[2:], nil
}
