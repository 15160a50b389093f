package ir

import "errors"

// ErrUnsupported marks an honest "weft does not support this" (an op, an
// attribute value, a dtype). Every layer wraps it with context; the
// conformance runner reports such failures as SKIP, everything else as FAIL.
var ErrUnsupported = errors.New("unsupported")

// The core op set.
//
// A core op carries the name of the ONNX operator (default domain) it comes
// from and the semantics of that operator's newest version up to opset 21, in
// canonical form: whatever ONNX moved from attributes to inputs over the
// versions is an input here (axes of Reduce*, Squeeze and Unsqueeze; split of
// Split; pads and constant_value of Pad; min/max of Clip; starts, ends, axes
// and steps of Slice; roi, scales and sizes of Resize), and the importer
// upgrades older forms. Optional inputs that are absent are nil.
//
// These ONNX operators never reach the IR; the importer rewrites them:
//
//	Constant      -> a constant value
//	Upsample      -> Resize
//	Scatter       -> ScatterElements
//
// These are core ops that passes.Lower decomposes once dtypes and ranks are
// known (their reference kernels remain, for graphs where that is not possible):
//
//	Gemm                -> [Transpose] MatMul [Mul alpha] [Add beta*C]
//	BatchNormalization  -> Mul + Add (inference form, constant statistics folded)
//
// weft-specific ops (fused patterns, quantized matmuls, KV-cache updates)
// are added by later passes and documented where they are introduced.
var LoweredONNXOps = []string{"Constant", "Upsample", "Scatter"}
