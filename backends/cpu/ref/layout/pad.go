package layout

import (
	"fmt"

	"github.com/weftrt/weft/backends/cpu/ref"
	"github.com/weftrt/weft/ir"
)

// Ops that grow or shrink every axis independently: Pad and CenterCropPad.
// Both are written as a per-axis map from output index to source index
// (-1: a fill element), applied by gatherAxes.
func init() {
	ref.Register("Pad", padKernel)
	ref.Register("CenterCropPad", centerCropPadKernel)
}

// gatherAxes builds the output of shape [len(maps[d])...] where element idx
// is x[maps[0][idx[0]], ...], or fill (one element's bytes) when any map
// entry is -1.
func gatherAxes(x *ir.Tensor, maps [][]int64, fill []byte) (*ir.Tensor, error) {
	shape := make([]int64, len(maps))
	for d, m := range maps {
		shape[d] = int64(len(m))
	}
	out, err := newOut(x.DType, shape)
	if err != nil {
		return nil, err
	}
	es := x.DType.Size()
	st := ref.Strides(x.Shape)
	idx := make([]int64, len(shape))
	for i := 0; i < out.Len(); i++ {
		unravel(int64(i), shape, idx)
		src := int64(0)
		for d, o := range idx {
			s := maps[d][o]
			if s < 0 {
				src = -1
				break
			}
			src += s * st[d]
		}
		if src < 0 {
			copy(out.Data[i*es:(i+1)*es], fill)
		} else {
			copyElem(out, i, x, int(src))
		}
	}
	return out, nil
}

// identityMap maps every index of a dim of size d to itself.
func identityMap(d int64) []int64 {
	m := make([]int64, d)
	for i := range m {
		m[i] = int64(i)
	}
	return m
}

// mod is the non-negative remainder.
func mod(a, b int64) int64 { return ((a % b) + b) % b }

// padMap maps the output indices of one axis of size d padded by (before,
// after). Negative pads first crop that side; the positive ones then pad
// the cropped extent according to mode.
func padMap(d, before, after int64, mode string) ([]int64, error) {
	if before < -maxElements || before > maxElements || after < -maxElements || after > maxElements {
		return nil, fmt.Errorf("pads (%d, %d) out of range", before, after)
	}
	lo, hi := max(-before, 0), d-max(-after, 0)
	if hi < lo {
		return nil, fmt.Errorf("pads (%d, %d) remove more than the dim %d", before, after, d)
	}
	m := hi - lo
	pb, pe := max(before, 0), max(after, 0)
	if m == 0 && mode != "constant" && pb+pe > 0 {
		return nil, fmt.Errorf("cannot %s-pad an empty axis", mode)
	}
	if m+pb+pe > maxElements {
		return nil, fmt.Errorf("pads (%d, %d) too large", before, after)
	}
	out := make([]int64, m+pb+pe)
	for o := range out {
		i := int64(o) - pb
		if i < 0 || i >= m {
			switch mode {
			case "constant":
				out[o] = -1
				continue
			case "edge":
				i = min(max(i, 0), m-1)
			case "reflect":
				if m == 1 {
					i = 0
				} else if i = mod(i, 2*(m-1)); i >= m {
					i = 2*(m-1) - i
				}
			case "wrap":
				i = mod(i, m)
			default:
				return nil, ref.Unsupported("Pad mode %q", mode)
			}
		}
		out[o] = lo + i
	}
	return out, nil
}

// padKernel: Pad(data, pads, constant_value?, axes?) with attribute mode
// (constant, reflect, edge, wrap). pads lists all begins, then all ends.
func padKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	r := len(x.Shape)
	pads, err := shapeValues(in[1], "pads")
	if err != nil {
		return nil, err
	}
	axes := identityMap(int64(r))
	if a := opt(in, 3); a != nil {
		if axes, err = shapeValues(a, "axes"); err != nil {
			return nil, err
		}
	}
	norm, err := ref.NormAxes(axes, r)
	if err != nil {
		return nil, err
	}
	if len(pads) != 2*len(norm) {
		return nil, fmt.Errorf("pads has %d entries for %d axes", len(pads), len(norm))
	}
	mode := n.AttrString("mode", "constant")
	switch mode {
	case "constant", "reflect", "edge", "wrap":
	default:
		return nil, ref.Unsupported("Pad mode %q", mode)
	}
	fill := make([]byte, x.DType.Size())
	if c := opt(in, 2); c != nil && c.Len() > 0 {
		if c.Len() != 1 {
			return nil, fmt.Errorf("constant_value must hold one value, got shape %v", c.Shape)
		}
		if c.DType != x.DType {
			return nil, fmt.Errorf("constant_value is %v, data is %v", c.DType, x.DType)
		}
		copy(fill, c.Data)
	}
	maps := make([][]int64, r)
	for d := range maps {
		maps[d] = identityMap(x.Shape[d])
	}
	k := len(norm)
	for i, ax := range norm {
		if maps[ax], err = padMap(x.Shape[ax], pads[i], pads[k+i], mode); err != nil {
			return nil, fmt.Errorf("axis %d: %w", ax, err)
		}
	}
	out, err := gatherAxes(x, maps, fill)
	if err != nil {
		return nil, err
	}
	return []*ir.Tensor{out}, nil
}

// centerCropPadKernel: CenterCropPad(input_data, shape) with attribute axes
// (default: all). Each listed axis is cropped to a centred window or padded
// with zeros on both sides; an odd difference puts the extra element at the
// end (crop start and pad start are both rounded down).
func centerCropPadKernel(_ *ref.Context, n *ir.Node, in []*ir.Tensor) ([]*ir.Tensor, error) {
	if err := need(in, 2); err != nil {
		return nil, err
	}
	x := in[0]
	r := len(x.Shape)
	shape, err := shapeValues(in[1], "shape")
	if err != nil {
		return nil, err
	}
	axes := n.AttrInts("axes", nil)
	if axes == nil {
		axes = identityMap(int64(r))
	}
	norm, err := ref.NormAxes(axes, r)
	if err != nil {
		return nil, err
	}
	if len(shape) != len(norm) {
		return nil, fmt.Errorf("shape has %d entries for %d axes", len(shape), len(norm))
	}
	maps := make([][]int64, r)
	for d := range maps {
		maps[d] = identityMap(x.Shape[d])
	}
	for i, ax := range norm {
		d, want := x.Shape[ax], shape[i]
		if want < 0 || want > maxElements {
			return nil, fmt.Errorf("invalid target size %d", want)
		}
		// Crop (d > want) starts (d-want)/2 into the input; pad (want > d)
		// starts the input (want-d)/2 into the output.
		m := make([]int64, want)
		for o := range m {
			var s int64
			if d >= want {
				s = int64(o) + (d-want)/2
			} else {
				s = int64(o) - (want-d)/2
			}
			if s < 0 || s >= d {
				s = -1
			}
			m[o] = s
		}
		maps[ax] = m
	}
	out, err := gatherAxes(x, maps, make([]byte, x.DType.Size()))
	if err != nil {
		return nil, err
	}
	return []*ir.Tensor{out}, nil
}
