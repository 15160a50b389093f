package onnx

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// The core ops are ONNX operators in their newest form (ir/ops.go). This
// file restates a node in the form of the opset being written, or refuses
// it when that opset cannot say the same thing.

// weftAttrs are attributes the importer adds to carry semantics that the
// newest form of an op cannot express; no ONNX opset weft writes has them.
var weftAttrs = map[string]string{
	"legacy_axis": "pre-opset-13 coercion to 2-D",
	"batched":     "Scan-8's batch axis",
}

// canonSince gives, for ops whose canonical (newest) form appeared after
// their first version, the first opset with that form; earlier targets are
// handled by downgrades or refused.
var canonSince = map[string]int64{
	"GroupNormalization": 21, // per-channel scale and bias
}

// attrSince lists attributes that later opsets added to an op: a node using
// one cannot be written for an older opset.
var attrSince = map[string]map[string]int64{
	"Split":              {"num_outputs": 18},
	"Resize":             {"antialias": 18, "axes": 18, "keep_aspect_ratio_policy": 18},
	"Cast":               {"saturate": 19},
	"CastLike":           {"saturate": 19},
	"QuantizeLinear":     {"saturate": 19, "block_size": 21, "output_dtype": 21},
	"DequantizeLinear":   {"block_size": 21},
	"AveragePool":        {"dilations": 19},
	"LpPool":             {"ceil_mode": 18},
	"Shape":              {"start": 15, "end": 15},
	"BatchNormalization": {"training_mode": 14},
	"Reshape":            {"allowzero": 14},
	"ScatterElements":    {"reduction": 16},
	"ScatterND":          {"reduction": 16},
	"RoiAlign":           {"coordinate_transformation_mode": 16},
}

// attrValueSince lists attribute values that later opsets added.
var attrValueSince = map[string]map[string]map[string]int64{
	"ScatterElements": {"reduction": {"max": 18, "min": 18}},
	"ScatterND":       {"reduction": {"max": 18, "min": 18}},
	"Pad":             {"mode": {"wrap": 19}},
	"Resize":          {"coordinate_transformation_mode": {"half_pixel_symmetric": 19}},
}

// inputsSince gives the opset from which an op takes more than n inputs.
var inputsSince = map[string]struct {
	n     int
	since int64
}{
	"Pad": {3, 18}, // axes
}

// axesInput18 are the reductions whose axes moved from an attribute to
// input 1 in opset 18 (ReduceSum moved in 13).
var axesInput18 = map[string]bool{
	"ReduceL1": true, "ReduceL2": true, "ReduceLogSum": true, "ReduceLogSumExp": true,
	"ReduceMax": true, "ReduceMean": true, "ReduceMin": true, "ReduceProd": true,
	"ReduceSumSquare": true,
}

// convert returns n as it is written at w.opset.
func (w *writer) convert(n *ir.Node) (*wnode, error) {
	if isWeftOp(n.Op) {
		return nil, fmt.Errorf("op %s is weft's own, not an ONNX operator: %w", n.Op, ir.ErrUnsupported)
	}
	spec, ok := opTable[n.Op]
	if !ok {
		return nil, fmt.Errorf("op %s is not an ONNX operator weft writes: %w", n.Op, ir.ErrUnsupported)
	}
	if spec.until != 0 && spec.until <= w.opset {
		return nil, fmt.Errorf("op %s was removed in opset %d: %w", n.Op, spec.until, ir.ErrUnsupported)
	}
	if need := max(spec.since, canonSince[n.Op]); need > w.opset {
		return nil, fmt.Errorf("op %s in this form needs opset >= %d, writing %d: %w", n.Op, need, w.opset, ir.ErrUnsupported)
	}
	wn := &wnode{inputs: append([]*ir.Value{}, n.Inputs...), attrs: ir.Attrs{}}
	for k, a := range n.Attrs {
		wn.attrs[k] = a
	}
	for _, k := range n.Attrs.Names() {
		if why, ok := weftAttrs[k]; ok {
			return nil, fmt.Errorf("attribute %s (weft's own: %s) has no ONNX form: %w", k, why, ir.ErrUnsupported)
		}
		if since := attrSince[n.Op][k]; since > w.opset {
			return nil, fmt.Errorf("attribute %s needs opset >= %d, writing %d: %w", k, since, w.opset, ir.ErrUnsupported)
		}
		if a := n.Attrs[k]; a.Kind == ir.AttrString {
			if since := attrValueSince[n.Op][k][a.Str]; since > w.opset {
				return nil, fmt.Errorf("attribute %s=%q needs opset >= %d, writing %d: %w", k, a.Str, since, w.opset, ir.ErrUnsupported)
			}
		}
	}
	if lim, ok := inputsSince[n.Op]; ok && lim.since > w.opset && countInputs(n.Inputs) > lim.n {
		return nil, fmt.Errorf("%d inputs need opset >= %d, writing %d: %w", countInputs(n.Inputs), lim.since, w.opset, ir.ErrUnsupported)
	}
	switch {
	case axesInput18[n.Op] && w.opset < 18:
		if err := axesToAttr(wn); err != nil {
			return nil, err
		}
	case n.Op == "DFT" && w.opset < 20:
		if err := dftAxisToAttr(wn); err != nil {
			return nil, err
		}
	case n.Op == "GridSample" && w.opset < 20:
		if err := gridSample16(n, wn); err != nil {
			return nil, err
		}
	}
	return wn, nil
}

// countInputs counts inputs up to the last present one.
func countInputs(ins []*ir.Value) int {
	n := len(ins)
	for n > 0 && ins[n-1] == nil {
		n--
	}
	return n
}

// axesToAttr restates Reduce*(X, axes) as Reduce*(X) with an axes attribute
// (opsets before 18). Absent axes mean all axes in both forms, unless
// noop_with_empty_axes, which the old form lacks, says otherwise.
func axesToAttr(wn *wnode) error {
	noop := wn.attrs["noop_with_empty_axes"]
	delete(wn.attrs, "noop_with_empty_axes")
	var axes *ir.Value
	if len(wn.inputs) > 1 {
		axes = wn.inputs[1]
	}
	if axes == nil {
		if noop != nil && noop.Kind == ir.AttrInt && noop.Int != 0 {
			return fmt.Errorf("noop_with_empty_axes=1 needs opset >= 18: %w", ir.ErrUnsupported)
		}
		wn.inputs = wn.inputs[:1]
		return nil
	}
	if !axes.IsConst() {
		return fmt.Errorf("axes computed at run time need opset >= 18: %w", ir.ErrUnsupported)
	}
	vals := axes.Const.Int64s()
	if len(vals) == 0 {
		if noop != nil && noop.Kind == ir.AttrInt && noop.Int != 0 {
			return fmt.Errorf("noop_with_empty_axes=1 needs opset >= 18: %w", ir.ErrUnsupported)
		}
	} else {
		wn.attrs["axes"] = &ir.Attr{Kind: ir.AttrInts, Ints: vals}
	}
	wn.inputs = wn.inputs[:1]
	return nil
}

// dftAxisToAttr restates DFT(X, dft_length, axis) as DFT-17's axis
// attribute. An absent axis means -2 in DFT-20 but 1 in DFT-17.
func dftAxisToAttr(wn *wnode) error {
	if len(wn.inputs) < 3 || wn.inputs[2] == nil {
		return fmt.Errorf("DFT without an axis input (axis -2) needs opset >= 20: %w", ir.ErrUnsupported)
	}
	axis := wn.inputs[2]
	if !axis.IsConst() || axis.Const.Len() != 1 {
		return fmt.Errorf("an axis input that is not a constant scalar needs opset >= 20: %w", ir.ErrUnsupported)
	}
	wn.attrs["axis"] = &ir.Attr{Kind: ir.AttrInt, Int: axis.Const.Int64(0)}
	wn.inputs = wn.inputs[:2]
	return nil
}

// gridSample16 restates GridSample-20 as GridSample-16, which has the old
// mode names and handles 4-D input only.
func gridSample16(n *ir.Node, wn *wnode) error {
	if x := n.In(0); x == nil || !x.Shape.RankKnown() || len(x.Shape) != 4 {
		return fmt.Errorf("GridSample on input of rank other than 4 (or unknown) needs opset >= 20: %w", ir.ErrUnsupported)
	}
	mode := n.AttrString("mode", "linear")
	switch mode {
	case "linear":
		mode = "bilinear"
	case "cubic":
		mode = "bicubic"
	}
	wn.attrs["mode"] = &ir.Attr{Kind: ir.AttrString, Str: mode}
	return nil
}
