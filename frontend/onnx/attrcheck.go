package onnx

import (
	"fmt"

	"github.com/weftrt/weft/ir"
)

// attrKinds lists attribute names whose kind is the same for every operator
// weft imports, so that a malformed model is refused at import time with the
// node named, instead of surprising a kernel. Names whose kind varies by op
// (value, k, scale, ...) are absent.
var attrKinds = map[string]ir.AttrKind{
	"axis": ir.AttrInt, "axes": ir.AttrInts, "keepdims": ir.AttrInt, "perm": ir.AttrInts,
	"kernel_shape": ir.AttrInts, "strides": ir.AttrInts, "pads": ir.AttrInts,
	"dilations": ir.AttrInts, "group": ir.AttrInt, "auto_pad": ir.AttrString,
	"mode": ir.AttrString, "epsilon": ir.AttrFloat, "alpha": ir.AttrFloat, "beta": ir.AttrFloat,
	"gamma": ir.AttrFloat, "transA": ir.AttrInt, "transB": ir.AttrInt, "to": ir.AttrInt,
	"split": ir.AttrInts, "ceil_mode": ir.AttrInt, "count_include_pad": ir.AttrInt,
	"storage_order": ir.AttrInt, "blocksize": ir.AttrInt, "direction": ir.AttrString,
	"hidden_size": ir.AttrInt, "largest": ir.AttrInt, "sorted": ir.AttrInt,
	"select_last_index": ir.AttrInt, "noop_with_empty_axes": ir.AttrInt,
	"exclusive": ir.AttrInt, "reverse": ir.AttrInt, "lambd": ir.AttrFloat,
	"momentum": ir.AttrFloat, "spatial": ir.AttrInt, "size": ir.AttrInt,
	"p": ir.AttrInt, "reduction": ir.AttrString, "batch_dims": ir.AttrInt,
	"output_padding": ir.AttrInts, "output_shape": ir.AttrInts,
	"activations": ir.AttrStrings, "activation_alpha": ir.AttrFloats,
	"activation_beta": ir.AttrFloats, "clip": ir.AttrFloat, "layout": ir.AttrInt,
	"linear_before_reset": ir.AttrInt, "input_forget": ir.AttrInt,
	"coordinate_transformation_mode": ir.AttrString, "nearest_mode": ir.AttrString,
	"cubic_coeff_a": ir.AttrFloat, "exclude_outside": ir.AttrInt,
	"extrapolation_value": ir.AttrFloat, "dtype": ir.AttrInt,
	"center_point_box": ir.AttrInt, "sampling_ratio": ir.AttrInt,
	"spatial_scale": ir.AttrFloat, "output_height": ir.AttrInt, "output_width": ir.AttrInt,
	"pooled_shape": ir.AttrInts, "onesided": ir.AttrInt, "inverse": ir.AttrInt,
	"periodic": ir.AttrInt, "output_datatype": ir.AttrInt, "equation": ir.AttrString,
	"upper": ir.AttrInt, "saturate": ir.AttrInt, "allowzero": ir.AttrInt,
	"start": ir.AttrInt, "end": ir.AttrInt, "num_outputs": ir.AttrInt,
	"then_branch": ir.AttrGraph, "else_branch": ir.AttrGraph, "body": ir.AttrGraph,
	"num_scan_inputs": ir.AttrInt, "scan_input_axes": ir.AttrInts,
	"scan_input_directions": ir.AttrInts, "scan_output_axes": ir.AttrInts,
	"scan_output_directions": ir.AttrInts, "fmod": ir.AttrInt,
	"detect_positive": ir.AttrInt, "detect_negative": ir.AttrInt,
	"across_channels": ir.AttrInt, "normalize_variance": ir.AttrInt,
	"time_axis": ir.AttrInt, "batch_axis": ir.AttrInt, "ignore_index": ir.AttrInt,
	"block_size": ir.AttrInt, "output_dtype": ir.AttrInt, "stash_type": ir.AttrInt,
	"approximate": ir.AttrString, "align_corners": ir.AttrInt,
	"padding_mode": ir.AttrString, "num_groups": ir.AttrInt, "training_mode": ir.AttrInt,
	"keep_aspect_ratio_policy": ir.AttrString, "antialias": ir.AttrInt,
}

// attrKindOverrides lists per-op exceptions to attrKinds.
var attrKindOverrides = map[string]map[string]ir.AttrKind{
	"Shrink": {"bias": ir.AttrFloat},
	"LRN":    {"bias": ir.AttrFloat},
	"Pad":    {"value": ir.AttrFloat},
}

// checkAttrKinds refuses attributes whose kind does not match what every
// ONNX operator using that name declares.
func checkAttrKinds(op string, attrs ir.Attrs) error {
	for _, name := range attrs.Names() {
		a := attrs[name]
		want, ok := attrKindOverrides[op][name]
		if !ok {
			want, ok = attrKinds[name]
		}
		if !ok || a.Kind == want {
			continue
		}
		return fmt.Errorf("attribute %q is %s, want %s", name, kindName(a.Kind), kindName(want))
	}
	return nil
}
