// Package nn holds the reference kernels for weft's compute-heavy neural
// network ops: matrix products (MatMul, Gemm and their integer and
// quantized forms), linear quantization, convolutions (Conv, ConvInteger,
// QLinearConv, ConvTranspose), pooling (MaxPool, AveragePool, LpPool, the
// Global* pools, MaxUnpool, MaxRoiPool) and LpNormalization.
//
// Conventions. Every kernel follows the ONNX semantics of the newest
// operator version up to opset 21 in weft's canonical form (see ir/ops.go).
// Float dtypes are computed in float64 and rounded once on store; integer
// products accumulate in int64 (wrapping like the output dtype). Tensors
// are row-major with layout N, C, D1..Dn for the spatial ops.
//
// Sliding-window ops share one geometry helper (geom.go): it resolves
// kernel_shape, strides, dilations, pads and auto_pad into per-axis output
// sizes exactly as the ONNX spec states (SAME_UPPER puts the odd pad at the
// end, ceil_mode drops windows that would start in the end padding), and
// precomputes, for every output position, the list of in-bounds input
// taps. Convolutions are direct (not im2col), so that the im2col+MatMul
// property test in conv_test.go is an independent check.
//
// The package registers its kernels with ref.Register in init(). It must
// not know about the scheduler, the runtime, a frontend or any other
// backend; it imports only ir and ref.
package nn
